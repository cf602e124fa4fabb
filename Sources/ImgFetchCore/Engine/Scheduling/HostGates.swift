/// What each host allows and what it has told imgfetch: the spacing of its requests
/// (`--rate-per-host`), a pause after it asked to slow down (429 or 503), and the circuit breaker
/// that gives up on a host after `--host-failures` connection failures in a row. The scheduler
/// asks `earliestStart` before it starts a host's next request. Engine thread only.
///
/// A host is an origin (scheme, host and port), as everywhere in the scheduler. Only hosts with
/// something to remember have an entry: a quiet host costs nothing, and entries whose spacing
/// and pause are over are swept away as the table grows, so a list over millions of hosts keeps
/// only the recent and the broken ones.
struct HostGates {
    struct Policy: Sendable {
        /// Requests per second per host; nil: no spacing.
        var rate: Double?
        /// Longest pause a host's 429 or 503 can cause, in seconds (`Retry-After` is capped the same).
        var pauseCap: Double = 60
        /// The first pause of a host that asks to slow down without `Retry-After`, in seconds.
        var basePause: Double = 0.5
        /// Connection failures in a row (and, separately, 429s or 503s in a row) after which a
        /// host's remaining items fail; 0: never.
        var failureLimit = 5
    }

    /// What happened to the request an attempt made.
    enum Answer {
        /// A 2xx or 304: the host serves.
        case served
        /// 429 or 503; `retryAfter` is the seconds its `Retry-After` asked for, if it had a usable one.
        case slowDown(status: Int, retryAfter: Double?)
        /// Any other HTTP response, or a failure after the request was sent.
        case answered
        /// No request went out: refused, DNS, TLS, or the connect phase timed out.
        case connectionFailed(DownloadError)
    }

    private struct Gate {
        /// The earliest start of the next request under the rate (monotonic ns).
        var nextStart: UInt64 = 0
        /// No request starts before this (monotonic ns).
        var pausedUntil: UInt64 = 0
        /// The last pause's length in seconds; a further 429 doubles it, each success halves it.
        var pause: Double = 0
        var connectionFailures = 0
        var slowDowns = 0
        /// Set when the breaker has tripped: every later item of the host fails with it.
        var down: DownloadError?

        func isIdle(now: UInt64) -> Bool {
            nextStart <= now && pausedUntil <= now && pause == 0 && connectionFailures == 0 && slowDowns == 0 && down == nil
        }
    }

    let policy: Policy
    private let interval: UInt64
    private var gates: [String: Gate] = [:]
    /// `gates.count` after the last sweep; the next sweep comes when the table has doubled.
    private var sweptCount = 64

    init(policy: Policy) {
        self.policy = policy
        interval = policy.rate.map { UInt64((1e9 / $0).rounded()) } ?? 0
    }

    /// The earliest time `host` may start a request: now or later.
    func earliestStart(of host: String) -> UInt64 {
        guard let gate = gates[host] else { return 0 }
        return max(gate.nextStart, gate.pausedUntil)
    }

    /// Why `host`'s items fail without a request, once its breaker has tripped.
    func failure(of host: String) -> DownloadError? { gates[host]?.down }

    /// A request to `host` starts at `now`.
    mutating func started(_ host: String, now: UInt64) {
        guard interval > 0 else { return }
        // A bucket of one token: after an idle spell the next request goes at once, then one per interval.
        gates[host, default: Gate()].nextStart = max(now, gates[host]?.nextStart ?? 0) + interval
        sweepIfLarge(now: now)
    }

    /// Records how `host` answered an attempt at `now`. Returns the failure for the host's remaining
    /// items when this answer tripped its breaker (only then: later answers of a host that is down
    /// return nil), and the pause in seconds when it paused the host.
    mutating func record(_ answer: Answer, host: String, now: UInt64) -> (tripped: DownloadError?, paused: Double?) {
        switch answer {
        case .served:
            guard var gate = gates[host] else { return (nil, nil) }
            gate.connectionFailures = 0
            gate.slowDowns = 0
            gate.pause = gate.pause / 2 < policy.basePause ? 0 : gate.pause / 2
            gates[host] = gate
            return (nil, nil)
        case .answered:
            guard gates[host] != nil else { return (nil, nil) }
            gates[host]!.connectionFailures = 0
            return (nil, nil)
        case .slowDown(let status, let retryAfter):
            var gate = gates[host] ?? Gate()
            let wasDown = gate.down != nil
            gate.connectionFailures = 0
            // Responses to requests that started before the pause do not double it again.
            let alreadyPaused = gate.pausedUntil > now
            if !alreadyPaused { gate.slowDowns += 1 }
            let doubled = alreadyPaused ? gate.pause : gate.pause * 2
            let pause = min(policy.pauseCap, max(retryAfter ?? 0, doubled, policy.basePause))
            gate.pause = max(gate.pause, pause)
            gate.pausedUntil = max(gate.pausedUntil, now + UInt64(pause * 1e9))
            if policy.failureLimit > 0, gate.slowDowns >= policy.failureLimit, gate.down == nil {
                gate.down = DownloadError(.http, "HTTP \(status), not requested: \(host) asked to slow down "
                    + "\(gate.slowDowns) times in a row; its remaining items fail (lower --rate-per-host, or raise --host-failures)")
            }
            gates[host] = gate
            sweepIfLarge(now: now)
            return (wasDown ? nil : gate.down, alreadyPaused ? nil : pause)
        case .connectionFailed(let error):
            var gate = gates[host] ?? Gate()
            let wasDown = gate.down != nil
            gate.connectionFailures += 1
            if policy.failureLimit > 0, gate.connectionFailures >= policy.failureLimit, gate.down == nil {
                gate.down = DownloadError(.hostUnreachable, "host unreachable: \(gate.connectionFailures) connection failures "
                    + "in a row to \(host) (--host-failures); the last: \(error.message)")
            }
            gates[host] = gate
            return (wasDown ? nil : gate.down, nil)
        }
    }

    /// Hosts with an entry (for tests).
    var count: Int { gates.count }

    /// Hosts paused at `now`, with the seconds left.
    func paused(now: UInt64) -> [(host: String, seconds: Double)] {
        gates.compactMap { host, gate in
            gate.pausedUntil > now ? (host, Double(gate.pausedUntil - now) / 1e9) : nil
        }
    }

    private mutating func sweepIfLarge(now: UInt64) {
        guard gates.count > sweptCount * 2 else { return }
        gates = gates.filter { !$0.value.isIdle(now: now) }
        sweptCount = max(64, gates.count)
    }
}
