import FoundationEssentials

/// What a transfer's completion needs from the cache decision that started it.
struct CacheContext: Sendable {
    /// The URL's index entry when the transfer started: files it indexed may be replaced, and a
    /// 304 confirms it.
    var entry: CacheEntry?
    /// The indexed file that a 304 serves from; nil for a full download.
    var source: String?

    /// The engine's request for `url`: conditional (the entry's validators, sent to the URL its
    /// response came from) when the transfer revalidates; with the body's SHA-256 taken when
    /// `digest` says so (see `OutputSink.digestsBody`).
    func request(for url: ParsedURL, priority: RequestPriority, digest: Bool) -> TransferRequest {
        var request = TransferRequest(url: url, priority: priority, digestsBody: digest)
        if source != nil, let entry {
            request.conditionalHeaders = entry.headers.validators
            request.conditionalURL = entry.finalURL
        }
        return request
    }
}
