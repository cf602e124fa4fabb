/// What the engine is asked to fetch. Plain HTTP: the engine knows nothing of caching, and a
/// revalidation is only a request with extra header lines.
struct TransferRequest: Sendable {
    let url: ParsedURL
    var priority: RequestPriority = .normal
    /// Header lines (such as `If-None-Match: "abc"`) sent only to `conditionalURL`: a redirect
    /// chain's other hops get none. A 304 from that URL ends the transfer as `.notModified`.
    var conditionalHeaders: [String] = []
    /// The normalized URL the conditional header lines are meant for.
    var conditionalURL: String?
    /// The digests of the body taken as it arrives: SHA-256 when the output directory keeps an
    /// index, and whatever a dataset records or checks (`DownloaderConfiguration.bodyDigests`).
    var digests: [DigestAlgorithm] = []
    /// Keep the first `maxSize` bytes of a longer body and end the transfer there as fetched,
    /// instead of failing it (robots.txt, of which RFC 9309 reads 500 KiB at most).
    var truncatesBody = false
    /// Refuse a 2xx response whose `X-Robots-Tag` opts out (unless `--ignore-opt-out`).
    var checksOptOut = true
    /// Not a download but a request to an object store (`url` is then the store's origin, for
    /// the per-host limits).
    var store: StoreExchange? {
        get { storeBox?.exchange }
        set { storeBox = newValue.map(StoreBox.init) }
    }
    /// Whether this is a store exchange: the engine's one question of a download's request, asked
    /// without materializing the exchange.
    var isStore: Bool { storeBox != nil }
    /// `store`, boxed: a download's request (thousands wait in the scheduler) carries one nil pointer,
    /// not the room of a whole exchange.
    var storeBox: StoreBox?
}

final class StoreBox: Sendable {
    let exchange: StoreExchange

    init(_ exchange: StoreExchange) {
        self.exchange = exchange
    }
}
