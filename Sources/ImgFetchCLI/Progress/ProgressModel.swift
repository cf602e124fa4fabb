import ImgFetchCore
import Synchronization

/// The run's counts and in-flight transfers: written by download callbacks on many threads, read
/// by the status display. State is guarded by `state` (a Mutex).
final class ProgressModel: Sendable {
    private struct State {
        var total = 0
        var listComplete = false
        var summary = RunSummary()
        var active: [String: (ordinal: Int, transfer: ActiveTransfer)] = [:]
        /// Bytes received per URL in flight: callers that share one transfer count once.
        var inFlight: [String: Int64] = [:]
        var nextOrdinal = 0
        var rate = RateMeter()
    }

    private let state = Mutex(State())
    private let started: Double

    init(now: Double) {
        started = now
    }

    /// A list item was read.
    func itemQueued() {
        state.withLock { $0.total += 1 }
    }

    /// The whole list was read: the total is final.
    func listFinished() {
        state.withLock { $0.listComplete = true }
    }

    /// Bytes of an in-flight item (key: its list position; url: its transfer's identity).
    func progress(key: String, url: String, name: String, received: Int64, expected: Int64?) {
        state.withLock { state in
            state.inFlight[url] = received
            if var entry = state.active[key] {
                entry.transfer.received = received
                entry.transfer.expected = expected
                state.active[key] = entry
            } else {
                state.active[key] = (state.nextOrdinal, ActiveTransfer(name: name, received: received, expected: expected))
                state.nextOrdinal += 1
            }
        }
    }

    /// An item is done.
    func finished(key: String, url: String, _ result: DownloadResult) {
        state.withLock { state in
            state.active[key] = nil
            state.inFlight[url] = nil
            state.summary.add(result)
        }
    }

    var summary: RunSummary { state.withLock { $0.summary } }

    func snapshot(now: Double) -> ProgressSnapshot {
        state.withLock { state in
            let inFlight = state.inFlight.values.reduce(0, +)
            let bytes = state.summary.bytes + inFlight
            let summary = state.summary
            let done = summary.items
            var eta: Double?
            if state.listComplete, done > 0, done < state.total {
                eta = (now - started) / Double(done) * Double(state.total - done)
            } else if state.listComplete, done == state.total {
                eta = 0
            }
            return ProgressSnapshot(
                done: done, total: state.total, listComplete: state.listComplete,
                saved: summary.saved, skipped: summary.skipped, failed: summary.failed,
                bytes: bytes, bytesPerSecond: state.rate.sample(bytes: bytes, at: now), etaSeconds: eta,
                active: state.active.values.sorted { $0.ordinal < $1.ordinal }.map(\.transfer))
        }
    }
}

/// A smoothed transfer rate from (time, total bytes) samples.
struct RateMeter {
    private var lastTime: Double?
    private var lastBytes: Int64 = 0
    private var rate: Double = 0

    /// Feeds a sample and returns the current rate in bytes per second.
    mutating func sample(bytes: Int64, at time: Double) -> Double {
        guard let last = lastTime else {
            lastTime = time
            lastBytes = bytes
            return 0
        }
        let elapsed = time - last
        // Samples closer than half a second are too noisy to move the estimate.
        guard elapsed >= 0.5 else { return rate }
        let instant = Double(bytes - lastBytes) / elapsed
        rate = rate == 0 ? instant : 0.7 * rate + 0.3 * instant
        lastTime = time
        lastBytes = bytes
        return rate
    }
}
