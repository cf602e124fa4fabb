/// Pending transfers in the order they start. Engine thread only.
///
/// A higher priority class always starts first; within a class FIFO starts the oldest request and
/// LIFO the newest. A host (origin) gets `perHost` connections: until it is known to multiplex, at
/// most `perHost` transfers run on it; once a response showed HTTP/2, up to `perHost` ×
/// `streamsPerConnection` (the overall limit, `-j`, is the engine's). Retries wait for their
/// start-at time, then go next. A host may also have to wait (`HostGates`: its rate, or a pause
/// it asked for): it is parked until then and its place in line is kept. Every operation is
/// O(log n): each host keeps a deque per class, and a heap orders the hosts that may start
/// something by their best candidate. Heap entries that went stale (the host's best changed, or it
/// filled up) are skipped when popped.
struct TransferScheduler {
    let order: ExecutionOrder
    let perHost: Int
    let streamsPerConnection: Int

    private struct HostQueue {
        /// One deque per priority class, highest first.
        var classes = [Deque<Transfer>](repeating: Deque(), count: RequestPriority.allCases.count)
        var running = 0
        var pending: Int { classes.reduce(0) { $0 + $1.count } }
    }

    /// A host that may start its best candidate, keyed by that candidate's place in line.
    private struct ReadyHost {
        let rank: Int
        let position: Int
        let host: String
    }

    private var hosts: [String: HostQueue] = [:]
    /// Hosts whose latest response came over a multiplexed connection. Kept while a host is idle:
    /// `hosts` forgets a host that has nothing pending or running.
    private var multiplexedHosts: Set<String> = []
    private var ready = BinaryHeap<ReadyHost> { ($0.rank, $0.position) < ($1.rank, $1.position) }
    private var delayed = BinaryHeap<(startAt: UInt64, sequence: Int, transfer: Transfer)> {
        ($0.startAt, $0.sequence) < ($1.startAt, $1.sequence)
    }
    /// Hosts that have something to start but must wait until `opensAt` (their rate or pause).
    private var parked = BinaryHeap<(opensAt: UInt64, host: String)> { $0.opensAt < $1.opensAt }
    /// Each host's rate, pause and breaker.
    private(set) var gates: HostGates
    private var nextSequence = 0
    /// Queued transfers, cancelled ones included until they are skipped.
    private(set) var pendingCount = 0

    init(order: ExecutionOrder, perHost: Int, streamsPerConnection: Int = 1, hostPolicy: HostGates.Policy = HostGates.Policy()) {
        self.order = order
        self.perHost = max(1, perHost)
        self.streamsPerConnection = max(1, streamsPerConnection)
        gates = HostGates(policy: hostPolicy)
    }

    /// How many transfers may run on `host` at once.
    func limit(for host: String) -> Int {
        multiplexedHosts.contains(host) ? perHost * streamsPerConnection : perHost
    }

    /// Records whether `host` multiplexes (from a response's protocol); a host that starts to
    /// may start more transfers at once.
    mutating func learn(host: String, multiplexes: Bool) {
        if multiplexes {
            guard multiplexedHosts.insert(host).inserted else { return }
            markReady(host)
        } else {
            // Transfers already running stay; libcurl queues any beyond the host's connections.
            multiplexedHosts.remove(host)
        }
    }

    var isEmpty: Bool { pendingCount == 0 && delayed.isEmpty }

    /// The earliest time something held back may start: a retry's start-at time, or a parked host's opening.
    var nextStartAt: UInt64? {
        switch (delayed.min?.startAt, parked.min?.opensAt) {
        case let (retry?, host?): min(retry, host)
        case let (retry, host): retry ?? host
        }
    }

    /// Records how `host` answered an attempt (see `HostGates.record`).
    mutating func record(_ answer: HostGates.Answer, host: String, now: UInt64) -> (tripped: DownloadError?, paused: Double?) {
        gates.record(answer, host: host, now: now)
    }

    mutating func enqueue(_ transfer: Transfer) {
        transfer.sequence = takeSequence()
        insert(transfer, atFront: false)
    }

    /// Holds `transfer` back until `startAt` (monotonic nanoseconds); it then goes ahead of the
    /// other pending requests of its class.
    mutating func enqueue(_ transfer: Transfer, startAt: UInt64) {
        delayed.push((startAt, takeSequence(), transfer))
    }

    /// The next transfer to start at `now`, counted as running on its host; nil when none may start.
    mutating func next(now: UInt64) -> Transfer? {
        releaseDueRetries(now: now)
        while let first = parked.min, first.opensAt <= now {
            markReady(parked.popMin()!.host)
        }
        while let entry = ready.popMin() {
            guard var queue = hosts[entry.host], queue.running < limit(for: entry.host),
                  let best = bestClass(of: queue), place(of: best.transfer) == (entry.rank, entry.position) else {
                continue  // stale entry
            }
            let opensAt = gates.earliestStart(of: entry.host)
            if opensAt > now && !best.transfer.isCancelled {
                parked.push((opensAt, entry.host))
                continue
            }
            // Take the queue out of the dictionary so it is uniquely owned: mutating a copy would copy every deque.
            hosts[entry.host] = nil
            let transfer = order == .fifo ? queue.classes[best.index].popFirst()! : queue.classes[best.index].popLast()!
            pendingCount -= 1
            if !transfer.isCancelled { queue.running += 1 }
            hosts[entry.host] = queue
            markReady(entry.host)
            // Cancelled while pending: its callers already have their result, so it is dropped here.
            if transfer.isCancelled {
                dropIfIdle(entry.host)
                continue
            }
            gates.started(entry.host, now: now)
            return transfer
        }
        return nil
    }

    /// A transfer that `next` returned has stopped running on `hostKey`.
    mutating func didStop(hostKey: String) {
        guard var queue = hosts[hostKey] else { return }
        queue.running -= 1
        hosts[hostKey] = queue
        if !dropIfIdle(hostKey) { markReady(hostKey) }
    }

    /// Empties the scheduler: every pending and held-back transfer, for cancelling them all.
    mutating func removeAll() -> [Transfer] {
        var removed: [Transfer] = []
        for var queue in hosts.values {
            for index in queue.classes.indices {
                while let transfer = queue.classes[index].popFirst() { removed.append(transfer) }
            }
        }
        while let entry = delayed.popMin() { removed.append(entry.transfer) }
        hosts.removeAll()
        parked = BinaryHeap { $0.opensAt < $1.opensAt }
        ready = BinaryHeap { ($0.rank, $0.position) < ($1.rank, $1.position) }
        pendingCount = 0
        return removed
    }

    /// Takes every pending and held-back transfer of `host` out of line (its breaker tripped);
    /// cancelled ones are dropped, their callers have their results.
    mutating func removeAll(of host: String) -> [Transfer] {
        var removed: [Transfer] = []
        if var queue = hosts[host] {
            hosts[host] = nil
            for index in queue.classes.indices {
                while let transfer = queue.classes[index].popFirst() {
                    pendingCount -= 1
                    if !transfer.isCancelled { removed.append(transfer) }
                }
            }
            // Its running transfers still stop through `didStop`.
            if queue.running > 0 { hosts[host] = queue }
        }
        // Rebuilt whole: a breaker trips once per host at most.
        var kept = BinaryHeap<(startAt: UInt64, sequence: Int, transfer: Transfer)> {
            ($0.startAt, $0.sequence) < ($1.startAt, $1.sequence)
        }
        while let entry = delayed.popMin() {
            if entry.transfer.hostKey != host {
                kept.push(entry)
            } else if !entry.transfer.isCancelled {
                removed.append(entry.transfer)
            }
        }
        delayed = kept
        return removed
    }

    /// Hosts paused at `now`, with the seconds left.
    func pausedHosts(now: UInt64) -> [(host: String, seconds: Double)] { gates.paused(now: now) }

    // MARK: - Internals

    private mutating func takeSequence() -> Int {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// Where a transfer stands in line: class first, then age (oldest first for FIFO, newest for LIFO).
    private func place(of transfer: Transfer) -> (Int, Int) {
        (transfer.priority.rankFromHighest, order == .fifo ? transfer.sequence : -transfer.sequence)
    }

    private func bestClass(of queue: HostQueue) -> (index: Int, transfer: Transfer)? {
        for (index, deque) in queue.classes.enumerated() {
            if let transfer = order == .fifo ? deque.first : deque.last { return (index, transfer) }
        }
        return nil
    }

    private mutating func insert(_ transfer: Transfer, atFront: Bool) {
        let key = transfer.hostKey
        let index = transfer.priority.rankFromHighest
        let before = hosts[key].flatMap { bestClass(of: $0)?.transfer }
        // Mutated in place: a copy of the host's queue would copy every pending transfer of the host.
        if atFront {
            hosts[key, default: HostQueue()].classes[index].prepend(transfer)
        } else {
            hosts[key, default: HostQueue()].classes[index].append(transfer)
        }
        pendingCount += 1
        // A new heap entry only when the host's best candidate changed; otherwise its entry is still valid.
        if let after = hosts[key].flatMap({ bestClass(of: $0)?.transfer }), after !== before { markReady(key) }
    }

    /// Pushes the host's current best candidate, if it may start one; older entries of the host go stale.
    private mutating func markReady(_ host: String) {
        guard let queue = hosts[host], queue.running < limit(for: host), let best = bestClass(of: queue) else { return }
        let (rank, position) = place(of: best.transfer)
        ready.push(ReadyHost(rank: rank, position: position, host: host))
    }

    @discardableResult
    private mutating func dropIfIdle(_ host: String) -> Bool {
        guard let queue = hosts[host], queue.running == 0, queue.pending == 0 else { return false }
        hosts[host] = nil
        return true
    }

    private mutating func releaseDueRetries(now: UInt64) {
        var due: [Transfer] = []
        while let first = delayed.min, first.startAt <= now {
            due.append(delayed.popMin()!.transfer)
        }
        // FIFO: a retry keeps its old (small) sequence and goes to the front of its class, oldest
        // first. LIFO: it becomes the newest request of its class.
        for transfer in order == .fifo ? due.sorted(by: { $0.sequence > $1.sequence }) : due {
            if order == .lifo { transfer.sequence = takeSequence() }
            insert(transfer, atFront: order == .fifo)
        }
    }
}
