import Glibc
import Synchronization

/// The run's AWS keys from one `CredentialSource`, fetched when first asked for and fetched
/// again before they expire: keys with less than `refreshMargin` left are renewed by the next
/// request that needs them, while the others wait for it (one fetch at a time). When a renewal
/// fails and the old keys have not yet expired, they go on being used, and the renewal is tried
/// again `retryPause` later; expired keys and a failed renewal fail the request.
///
/// Any thread but the engine's may ask: a fetch waits for its exchanges on the engine.
public final class CredentialProvider: Sendable {
    public let chain: CredentialChain
    /// Renew keys this many seconds before they expire (the AWS SDKs renew at 10 to 15 minutes).
    static let refreshMargin = 600.0
    /// After a failed renewal with keys still valid, the next try waits this long.
    static let retryPause = 10.0

    private struct State {
        var credentials: AWSCredentials?
        /// The time before which a failed renewal is not tried again.
        var quietUntil = 0.0
    }

    private let state = Mutex(State())
    /// Held while fetching, so that one thread fetches and the others wait for its keys.
    private let fetching = ConditionLock()

    public init(chain: CredentialChain) {
        self.chain = chain
    }

    /// A provider of fixed keys (tests, programs that have their own).
    public convenience init(_ credentials: AWSCredentials) {
        self.init(chain: CredentialChain(source: .fixed(credentials, origin: "the given keys"), tried: []))
    }

    /// The source's name, or what was tried when none is configured.
    public var sourceName: String { chain.source?.name ?? "none" }

    /// Keys good for now: cached, or fetched with `fetcher`'s engine.
    func current(_ fetcher: CredentialFetcher) throws(DownloadError) -> AWSCredentials {
        if let usable = cached(at: wallClock()) { return usable }
        fetching.lock()
        defer { fetching.unlock() }
        let now = wallClock()
        if let usable = cached(at: now) { return usable }
        guard let source = chain.source else { throw noSource() }
        do {
            let fresh = try fetcher.fetch(source)
            state.withLock { $0.credentials = fresh; $0.quietUntil = 0 }
            return fresh
        } catch {
            let old = state.withLock { state -> AWSCredentials? in
                guard let old = state.credentials, old.isFresh(at: now, margin: 0), error.kind != .cancelled else { return nil }
                state.quietUntil = now + Self.retryPause
                return old
            }
            if let old { return old }
            if chain.tried.isEmpty || error.kind == .cancelled { throw error }
            // The last source of the chain failed: what was tried before it says why it was asked.
            if case .instanceMetadata = source {
                throw DownloadError(.storage, "no AWS credentials: tried \(chain.tried.joined(separator: ", ")), then \(error.message)")
            }
            throw error
        }
    }

    private func cached(at now: Double) -> AWSCredentials? {
        state.withLock { state in
            guard let credentials = state.credentials else { return nil }
            if credentials.isFresh(at: now, margin: Self.refreshMargin) { return credentials }
            // Within the margin, after a failed renewal: the old keys while they last.
            if now < state.quietUntil, credentials.isFresh(at: now, margin: 0) { return credentials }
            return nil
        }
    }

    private func noSource() -> DownloadError {
        DownloadError(.storage, "no AWS credentials: tried \(chain.tried.joined(separator: ", "))")
    }

    private func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
