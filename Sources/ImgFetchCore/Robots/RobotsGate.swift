import FoundationEssentials
import Glibc

/// `--robots`: before the first request to a host, its `/robots.txt` (RFC 9309); every URL the
/// rules for imgfetch disallow is skipped without a request.
///
/// The first item of a host asks the cache index for a fresh copy, or else has the file fetched
/// (through the engine, like any transfer: the host's rate and pause apply) while it and every
/// later item of the host wait here, in list order. Once the rules are known, the waiting items
/// go on. Answers: 2xx, the rules; 4xx (after at most 10 redirects), or too many redirects:
/// everything allowed; 5xx or 429: nothing allowed, as RFC 9309 §2.3.1.4 asks of a file that
/// cannot be had; no answer at all (refused, DNS, TLS, a timeout): the host's items fail with
/// that error, and nothing is requested from it. Kept in the index (2xx and 4xx, fresh for what
/// the response's cache headers say, or else a day; never more than a day) and in memory for
/// the `memoryCapacity` hosts used last.
final class RobotsGate: @unchecked Sendable {
    enum Verdict: Sendable, Equatable {
        case allowed
        /// Skip the URL; the reason names the rule, or why the whole host is disallowed.
        case disallowed(String)
        /// Fail the URL without a request: the host could not be reached for its robots.txt.
        case failed(DownloadError)
    }

    typealias Resume = @Sendable (Verdict) -> Void

    /// How the fetch of a robots.txt ended.
    enum Fetched: Sendable {
        /// A final response with a body (2xx) or without one (an error status).
        case answered(status: Int, body: [UInt8], headers: ResponseCacheHeaders, requestTime: Double, responseTime: Double)
        /// No answer: a network failure, or too many redirects (`redirectFailure` true).
        case failed(DownloadError, redirectFailure: Bool)
        /// The fetch was cancelled (the run is stopping): the host's items go on, to be cancelled.
        case cancelled
    }

    private struct Known {
        let rules: RobotsRules
        var lastUse: UInt64
    }

    private struct State {
        var known: [String: Known] = [:]
        var uses: UInt64 = 0
        var waiting: [String: [(path: String, resume: Resume)]] = [:]
        /// Items parked, or let go and not yet through `resumed()`: `waitUntilIdle` waits for 0.
        var unsettled = 0
        /// `releaseAll` ran: from now on every URL is let through at once (the run is stopping).
        var closed = false
    }

    /// Guards `state`; a `ConditionLock` so that `waitUntilIdle` can sleep. Hence `@unchecked Sendable`.
    private let condition = ConditionLock()
    private var state = State()
    private let index: CacheIndex?
    private let agent: String
    /// Starts the fetch of `origin`'s robots.txt; the result comes back through the gate's `learn`.
    private let fetch: @Sendable (String, RobotsGate) -> Void

    /// Hosts whose rules stay in memory; the least recently used beyond it are read again from
    /// the index when needed.
    static let memoryCapacity = 1024
    /// RFC 9309 §2.4: a cached robots.txt is not used for more than a day. A response without
    /// cache headers is kept that long too, as crawlers do.
    static let maxFreshness: Double = 24 * 3600

    init(index: CacheIndex?, agent: String = DownloaderConfiguration.productToken,
         fetch: @escaping @Sendable (String, RobotsGate) -> Void) {
        self.index = index
        self.agent = agent
        self.fetch = fetch
    }

    /// The verdict for `url` now; or nil, and `resume` gets it (on another thread) once its
    /// host's robots.txt is known. Whoever runs `resume` calls `resumed()` when done with it.
    func check(_ url: ParsedURL, resume: @escaping Resume) -> Verdict? {
        let origin = url.origin
        let path = Self.pathAndQuery(of: url.normalized)
        enum Step { case known(RobotsRules), wait, lookUp, closed }
        let step = withState { state -> Step in
            if state.closed { return .closed }
            state.uses += 1
            if let known = state.known[origin] {
                state.known[origin]!.lastUse = state.uses
                return .known(known.rules)
            }
            state.unsettled += 1
            if state.waiting[origin] != nil {
                state.waiting[origin]!.append((path, resume))
                return .wait
            }
            state.waiting[origin] = [(path, resume)]
            return .lookUp
        }
        switch step {
        case .closed:
            return .allowed
        case .known(let rules):
            return Self.verdict(rules, path)
        case .wait:
            return nil
        case .lookUp:
            if let stored = index?.robots(for: origin, now: Date().timeIntervalSince1970) {
                settle(origin, rules: rules(status: stored.status, body: stored.body))
            } else {
                fetch(origin, self)
            }
            return nil
        }
    }

    /// A `resume` that `check` was given has done its work.
    func resumed() {
        condition.lock()
        state.unsettled -= 1
        let idle = state.unsettled == 0
        condition.unlock()
        if idle { condition.broadcast() }
    }

    /// Blocks until no item waits in the gate or is on its way out of it.
    func waitUntilIdle() {
        condition.lock()
        while state.unsettled > 0 { condition.wait() }
        condition.unlock()
    }

    /// The fetch of `origin`'s robots.txt ended: records the rules (in the index when they may
    /// be reused) and lets the host's waiting items go on.
    func learn(_ origin: String, _ fetched: Fetched) {
        switch fetched {
        case .answered(let status, let body, let headers, let requestTime, let responseTime):
            let rules = self.rules(status: status, body: body)
            let freshness = CacheFreshness(headers: headers, requestTime: requestTime, responseTime: responseTime)
            let directives = headers.directives
            let explicit = directives.maxAge != nil || headers.expires != nil
            let lifetime = directives.noStore ? 0 : explicit ? min(freshness.lifetime - freshness.initialAge, Self.maxFreshness)
                : Self.maxFreshness
            if (200..<500).contains(status) && status != 429 && lifetime > 0 {
                index?.storeRobots(StoredRobots(status: status, body: Array(body.prefix(RobotsRules.maxBytes)),
                                                expires: responseTime + lifetime), for: origin)
            }
            settle(origin, rules: rules)
        case .failed(_, redirectFailure: true):
            settle(origin, rules: .allowAll)
        case .failed(let error, redirectFailure: false):
            let failure = DownloadError(error.kind, "robots.txt could not be fetched (\(error.message)); nothing is requested "
                + "from a host whose robots.txt cannot be read (RFC 9309)")
            release(withdrawing: origin) { _ in .failed(failure) }
        case .cancelled:
            release(withdrawing: origin) { _ in .allowed }
        }
    }

    /// Lets every item still waiting go on with `verdict`, and lets every later URL through at
    /// once (the run is being cancelled, and the items will be).
    func releaseAll(_ verdict: Verdict) {
        let waiting = withState { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return state.waiting.values.flatMap { $0 }
        }
        for item in waiting { item.resume(verdict) }
    }

    private func settle(_ origin: String, rules: RobotsRules) {
        let waiting = withState { state in
            state.uses += 1
            state.known[origin] = Known(rules: rules, lastUse: state.uses)
            if state.known.count > Self.memoryCapacity {
                // The least recently used half goes: one sort per `memoryCapacity / 2` new hosts.
                let evicted = state.known.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(Self.memoryCapacity / 2)
                for (host, _) in evicted { state.known[host] = nil }
            }
            return state.waiting.removeValue(forKey: origin) ?? []
        }
        for item in waiting { item.resume(Self.verdict(rules, item.path)) }
    }

    /// Lets `origin`'s waiting items go with `verdict`, without learning rules for it.
    private func release(withdrawing origin: String, _ verdict: (String) -> Verdict) {
        let waiting = withState { $0.waiting.removeValue(forKey: origin) ?? [] }
        for item in waiting { item.resume(verdict(item.path)) }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    private func rules(status: Int, body: [UInt8]) -> RobotsRules {
        switch status {
        case 200..<300: RobotsRules(parsing: body, agent: agent)
        case 429, 500...: .disallowAll("robots.txt answered HTTP \(status), so the host allows nothing (RFC 9309)")
        default: .allowAll
        }
    }

    static func verdict(_ rules: RobotsRules, _ path: String) -> Verdict {
        switch rules.whole {
        case .allowAll:
            return .allowed
        case .disallowAll(let reason):
            return path == "/robots.txt" ? .allowed : .disallowed(reason)
        case .rules:
            guard let rule = rules.disallowingRule(for: path) else { return .allowed }
            return .disallowed("robots.txt: \(rule.text) (User-agent: \(rules.group ?? "*"))")
        }
    }

    /// The path and query of a normalized URL (`/a/b.jpg?x=1`): what robots.txt rules match.
    static func pathAndQuery(of normalized: String) -> String {
        let bytes = Array(normalized.utf8)
        var index = 0
        while index + 2 < bytes.count, !(bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                                         && bytes[index + 2] == UInt8(ascii: "/")) { index += 1 }
        guard index + 2 < bytes.count,
              let start = bytes[(index + 3)...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else {
            return "/"
        }
        let path = String(decoding: bytes[start...], as: UTF8.self)
        return path.hasPrefix("?") ? "/" + path : path
    }
}

extension RobotsGate {
    /// The first `RobotsRules.maxBytes` of a fetched robots.txt.
    static func contents(of file: TempFile) -> [UInt8] {
        file.withContents { source -> [UInt8] in
            switch source {
            case .memory(let bytes):
                return Array(bytes.prefix(RobotsRules.maxBytes))
            case .descriptor(let descriptor):
                return read(descriptor)
            case .file(let path):
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { return [] }
                defer { close(descriptor) }
                return read(descriptor)
            }
        }
    }

    private static func read(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        _ = FileDescriptorIO.forEachChunk(of: descriptor, chunkSize: 64 << 10) { chunk in
            bytes += chunk.prefix(RobotsRules.maxBytes - bytes.count)
            return bytes.count < RobotsRules.maxBytes
        }
        return bytes
    }
}
