import ImgFetchCore
import Synchronization

/// The run's counts and in-flight transfers: written by download callbacks on many threads, read
/// by the status display. State is guarded by `state` (a Mutex).
final class ProgressModel: Sendable {
    private struct State {
        var total = 0
        var listComplete = false
        var summary = RunSummary()
        /// In-flight items with when their bytes last changed (or their attempt started).
        var active: [ObjectIdentifier: (ordinal: Int, transfer: ActiveTransfer, changed: Double)] = [:]
        /// Bytes received per transfer in flight (by normalized URL): items that share one
        /// transfer count its bytes once.
        var inFlight: [String: Int64] = [:]
        /// Body bytes received over the network, cancelled and failed transfers included: what
        /// the bar shows and what the summary reports, so the two never disagree.
        var received: Int64 = 0
        var nextOrdinal = 0
        var byteRate = SmoothedRate()
        var remaining = RemainingTimeEstimator()
        /// Hosts paused after a 429 or 503: origin → when the pause ends (monotonic seconds).
        var pausedUntil: [String: Double] = [:]
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

    /// `host` asked to slow down: no request goes to it for `seconds` from `now`.
    func hostPaused(_ host: String, seconds: Double, now: Double) {
        state.withLock { state in
            state.pausedUntil = state.pausedUntil.filter { $0.value > now }
            state.pausedUntil[host] = max(state.pausedUntil[host] ?? 0, now + seconds)
        }
    }

    /// The whole list was read: the total is final.
    func listFinished() {
        state.withLock { $0.listComplete = true }
    }

    /// Bytes of an in-flight item.
    ///
    /// - Parameters:
    ///   - item: the item's slot, shared with its `finished` call.
    ///   - transfer: the identity of the transfer (the normalized URL), which items may share.
    func progress(_ item: ProgressItem, transfer: String, name: String, received: Int64, expected: Int64?,
                  now: Double = monotonicSeconds()) {
        state.withLock { state in
            // A progress event can still be on its way when the item was cancelled: it must not
            // count again or bring the row back.
            guard !item.isFinished else { return }
            let previous = state.inFlight[transfer] ?? 0
            // Less than before means a retry started the body again: all of it is new.
            state.received += received >= previous ? received - previous : received
            state.inFlight[transfer] = received
            let key = ObjectIdentifier(item)
            if var entry = state.active[key] {
                // A new attempt (0 again) or new bytes restart the idle clock.
                if received != entry.transfer.received || received == 0 { entry.changed = now }
                entry.transfer.received = received
                entry.transfer.expected = expected
                state.active[key] = entry
            } else {
                state.active[key] = (state.nextOrdinal, ActiveTransfer(name: name, received: received, expected: expected), now)
                state.nextOrdinal += 1
            }
        }
    }

    /// An item is done; `item` is nil for one that never had a transfer (a bad list line).
    func finished(_ item: ProgressItem?, transfer: String, _ result: DownloadResult) {
        state.withLock { state in
            if let item {
                item.isFinished = true
                state.active[ObjectIdentifier(item)] = nil
            }
            // The transfer's own item settles its bytes; one that shared it leaves them alone, as
            // the summary counts a shared body once.
            if !result.coalesced || result.status == .cancelled {
                let seen = state.inFlight.removeValue(forKey: transfer) ?? 0
                if !result.coalesced { state.received += max(0, result.bytes - seen) }
            }
            state.summary.add(result)
        }
    }

    /// Counts a finished item as `new` instead of `old` (its outcome changed after the fact).
    func revise(_ old: DownloadResult, as new: DownloadResult) {
        state.withLock { $0.summary.reclassify(old, as: new) }
    }

    /// The counts so far; its bytes are the bytes received, as the bar shows them.
    var summary: RunSummary {
        state.withLock { state in
            var summary = state.summary
            summary.bytes = state.received
            return summary
        }
    }

    func snapshot(now: Double) -> ProgressSnapshot {
        state.withLock { state in
            let summary = state.summary
            let done = summary.items
            let active = state.active.values.sorted { $0.ordinal < $1.ordinal }.map { entry in
                var transfer = entry.transfer
                transfer.idleSeconds = max(0, now - entry.changed)
                return transfer
            }
            // Items in flight count for the part of their body already received.
            let partial = active.reduce(0.0) { sum, transfer in
                sum + (transfer.expected.map { ProgressFields.fraction(received: transfer.received, expected: $0) } ?? 0)
            }
            let elapsed = now - started
            let average = elapsed > 0 ? Double(state.received) / elapsed : 0
            let smoothed = state.byteRate.sample(Double(state.received), at: now)
            let eta = state.remaining.estimate(RemainingWork(
                done: Double(done) + partial, total: state.total, totalIsFinal: state.listComplete,
                bytesLeft: Self.bytesLeft(active: active, received: state.received, done: done, total: state.total),
                bytesPerSecond: smoothed, allIdle: !active.isEmpty && active.allSatisfy { $0.note != nil }), at: now)
            return ProgressSnapshot(
                done: done, total: state.total, listComplete: state.listComplete,
                saved: summary.saved, skipped: summary.skipped, failed: summary.failed,
                bytes: state.received, bytesPerSecond: smoothed ?? average, averageBytesPerSecond: average,
                etaSeconds: eta, active: active,
                pausedHosts: state.pausedUntil.filter { $0.value > now }
                    .map { PausedHost(host: $0.key, secondsLeft: $0.value - now) }
                    .sorted { ($0.secondsLeft, $1.host) > ($1.secondsLeft, $0.host) })
        }
    }
}

extension ProgressModel {
    /// The bytes still to come: what the running transfers lack of their size, and for each item
    /// not started (or of unknown size) the mean size of the bodies seen so far, finished or
    /// running (a running one by its Content-Length, else what it has received). nil before any
    /// byte, when nothing can be said of sizes.
    static func bytesLeft(active: [ActiveTransfer], received: Int64, done: Int, total: Int) -> Double? {
        guard received > 0, done + active.count > 0 else { return nil }
        let running = active.reduce((received: 0.0, size: 0.0)) { sum, transfer in
            (sum.received + Double(transfer.received), sum.size + Double(transfer.expected ?? transfer.received))
        }
        let mean = (Double(received) - running.received + running.size) / Double(done + active.count)
        let lacking = active.reduce(0.0) { sum, transfer in
            let size = transfer.expected.map(Double.init) ?? max(mean, Double(transfer.received))
            return sum + max(0, size - Double(transfer.received))
        }
        let waiting = Double(max(0, total - done - active.count)) * mean
        return lacking + waiting
    }
}

/// One list item's place in the progress model, shared by its progress and completion callbacks.
///
/// `@unchecked Sendable`: `isFinished` is only read and written under the model's lock.
final class ProgressItem: @unchecked Sendable {
    fileprivate var isFinished = false

    init() {}
}
