/// How the cache index of the output directory is used (`--cache-policy`), after SDWebImage's
/// choice between the protocol's cache policy and reloading.
public enum CachePolicy: String, Sendable, CaseIterable {
    /// A fresh entry whose files are on disk needs no request; a stale one is revalidated with
    /// its validators (RFC 9111).
    case `protocol`
    /// Every item is downloaded in full; the index is still updated.
    case reload
    /// No request at all: items are served from the index, or reported missing.
    case onlyIfCached = "only-if-cached"
}

/// How an item was satisfied with respect to the cache.
public enum CacheOutcome: String, Sendable {
    /// Fresh in the index: no request was made.
    case fresh
    /// Stale in the index and served anyway, without a request (`only-if-cached`).
    case stale
    /// The server answered 304 Not Modified to a conditional request: the file was kept.
    case revalidated
    /// The body was downloaded.
    case downloaded
}
