/// Pending transfers, in the order they start: FIFO or LIFO, at most `perHost` running per host,
/// and retries held back until their start-at time. Engine thread only.
struct TransferScheduler {
    let order: ExecutionOrder
    let perHost: Int

    private struct HostQueue {
        var pending = Deque<Transfer>()
        var running = 0
    }

    private var hosts: [String: HostQueue] = [:]
    /// Retries waiting for their start-at time (monotonic nanoseconds); few at a time, so a plain array.
    private var delayed: [(startAt: UInt64, transfer: Transfer)] = []
    private var nextSequence = 0
    private(set) var pendingCount = 0

    init(order: ExecutionOrder, perHost: Int) {
        self.order = order
        self.perHost = max(1, perHost)
    }

    var isEmpty: Bool { pendingCount == 0 && delayed.isEmpty }

    /// The earliest start-at time of a held-back retry.
    var nextStartAt: UInt64? { delayed.map(\.startAt).min() }

    mutating func enqueue(_ transfer: Transfer) {
        transfer.sequence = nextSequence
        nextSequence += 1
        hosts[transfer.hostKey, default: HostQueue()].pending.append(transfer)
        pendingCount += 1
    }

    /// Holds `transfer` back until `startAt`; it then goes ahead of the other pending requests of its host.
    mutating func enqueue(_ transfer: Transfer, startAt: UInt64) {
        delayed.append((startAt, transfer))
    }

    /// The next transfer to start at `now`, counted as running on its host; nil when none may start.
    mutating func next(now: UInt64) -> Transfer? {
        releaseDueRetries(now: now)
        while true {
            var best: (key: String, sequence: Int)?
            for (key, queue) in hosts where queue.running < perHost {
                guard let candidate = order == .fifo ? queue.pending.first : queue.pending.last else { continue }
                let better = best.map { order == .fifo ? candidate.sequence < $0.sequence : candidate.sequence > $0.sequence } ?? true
                if better { best = (key, candidate.sequence) }
            }
            guard let key = best?.key else { return nil }
            let transfer = order == .fifo ? hosts[key]!.pending.popFirst()! : hosts[key]!.pending.popLast()!
            pendingCount -= 1
            // Cancelled while pending: its caller already has its result, so drop it here.
            if transfer.isCancelled {
                dropIfIdle(key)
                continue
            }
            hosts[key]!.running += 1
            return transfer
        }
    }

    /// A transfer that `next` returned has stopped running on `hostKey`.
    mutating func didStop(hostKey: String) {
        hosts[hostKey]?.running -= 1
        dropIfIdle(hostKey)
    }

    private mutating func dropIfIdle(_ key: String) {
        if let queue = hosts[key], queue.running == 0, queue.pending.isEmpty { hosts[key] = nil }
    }

    private mutating func releaseDueRetries(now: UInt64) {
        guard let earliest = nextStartAt, earliest <= now else { return }
        var due: [Transfer] = []
        delayed.removeAll { entry in
            guard entry.startAt <= now else { return false }
            due.append(entry.transfer)
            return true
        }
        due.sort { $0.sequence < $1.sequence }
        // A retry goes next: for FIFO it keeps its old (small) sequence at the front of its host's
        // queue (prepended newest first, so the oldest ends up first); for LIFO it becomes the newest request.
        for transfer in order == .fifo ? due.reversed() : due {
            var queue = hosts[transfer.hostKey, default: HostQueue()]
            if order == .fifo {
                queue.pending.prepend(transfer)
            } else {
                transfer.sequence = nextSequence
                nextSequence += 1
                queue.pending.append(transfer)
            }
            hosts[transfer.hostKey] = queue
            pendingCount += 1
        }
    }
}
