import XCTest
@testable import ImgFetchCore

final class TransferSchedulerTests: XCTestCase {
    private let hostA = "http://a.example"
    private let hostB = "http://b.example"
    private var nextID = 0

    // MARK: - Order

    func testFIFOStartsTheOldestFirst() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let transfers = try [hostA, hostB, hostA, hostB, hostA].map { try makeTransfer($0) }
        transfers.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), transfers.map(\.id))
    }

    func testLIFOStartsTheNewestFirst() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 10)
        let transfers = try [hostA, hostB, hostA, hostB, hostA].map { try makeTransfer($0) }
        transfers.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), transfers.reversed().map(\.id))
    }

    func testLIFOPrefersARequestAddedWhileOthersWait() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 10)
        let first = try makeTransfer(hostA)
        let second = try makeTransfer(hostA)
        scheduler.enqueue(first)
        scheduler.enqueue(second)
        XCTAssertEqual(scheduler.next(now: 0)?.id, second.id)
        let third = try makeTransfer(hostB)
        scheduler.enqueue(third)
        XCTAssertEqual(scheduler.next(now: 0)?.id, third.id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, first.id)
    }

    // MARK: - Per-host cap

    func testPerHostCapLetsAnotherHostGoNext() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 2)
        let a = try (0..<3).map { _ in try makeTransfer(hostA) }
        let b = try makeTransfer(hostB)
        a.forEach { scheduler.enqueue($0) }
        scheduler.enqueue(b)

        XCTAssertEqual(scheduler.next(now: 0)?.id, a[0].id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[1].id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, b.id)
        XCTAssertNil(scheduler.next(now: 0), "a third transfer to host A started despite perHost 2")
        XCTAssertFalse(scheduler.isEmpty)

        scheduler.didStop(hostKey: a[0].hostKey)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[2].id)
        XCTAssertNil(scheduler.next(now: 0))
        XCTAssertTrue(scheduler.isEmpty)
    }

    func testPerHostCapInLIFOOrder() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 1)
        let b = try makeTransfer(hostB)
        let a1 = try makeTransfer(hostA)
        let a2 = try makeTransfer(hostA)
        [b, a1, a2].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, a2.id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, b.id)
        XCTAssertNil(scheduler.next(now: 0))
        scheduler.didStop(hostKey: a2.hostKey)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a1.id)
    }

    func testHostKeyIsTheOriginSoPortsAreSeparateHosts() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let plain = try makeTransfer("http://a.example")
        let otherPort = try makeTransfer("http://a.example:8080")
        let tls = try makeTransfer("https://a.example")
        [plain, otherPort, tls].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), [plain.id, otherPort.id, tls.id])
    }

    func testPerHostBelowOneMeansOne() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 0)
        XCTAssertEqual(scheduler.perHost, 1)
        scheduler.enqueue(try makeTransfer(hostA))
        scheduler.enqueue(try makeTransfer(hostA))
        XCTAssertNotNil(scheduler.next(now: 0))
        XCTAssertNil(scheduler.next(now: 0))
    }

    // MARK: - Cancellation

    func testCancelledPendingTransfersAreSkipped() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let transfers = try (0..<4).map { _ in try makeTransfer(hostA) }
        transfers.forEach { scheduler.enqueue($0) }
        transfers[1].stage = .cancelled
        transfers[3].stage = .cancelled
        XCTAssertEqual(drain(&scheduler), [transfers[0].id, transfers[2].id])
        XCTAssertTrue(scheduler.isEmpty)
        XCTAssertEqual(scheduler.pendingCount, 0)
    }

    func testCancelledTransferDoesNotTakeAHostSlot() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let cancelled = try makeTransfer(hostA)
        let live = try makeTransfer(hostA)
        scheduler.enqueue(cancelled)
        scheduler.enqueue(live)
        cancelled.stage = .cancelled
        XCTAssertEqual(scheduler.next(now: 0)?.id, live.id)
    }

    func testCancelledRetryIsSkippedOnceDue() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let transfer = try makeTransfer(hostA)
        scheduler.enqueue(transfer, startAt: 10)
        transfer.stage = .cancelled
        XCTAssertNil(scheduler.next(now: 10))
        XCTAssertTrue(scheduler.isEmpty)
    }

    // MARK: - Delayed retries

    func testRetryIsHeldBackUntilItsStartAt() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let transfer = try makeTransfer(hostA)
        scheduler.enqueue(transfer, startAt: 1_000)
        XCTAssertFalse(scheduler.isEmpty)
        XCTAssertEqual(scheduler.nextStartAt, 1_000)
        XCTAssertNil(scheduler.next(now: 0))
        XCTAssertNil(scheduler.next(now: 999))
        XCTAssertEqual(scheduler.next(now: 1_000)?.id, transfer.id)
        XCTAssertNil(scheduler.nextStartAt)
        XCTAssertTrue(scheduler.isEmpty)
    }

    func testFIFORetryGoesFirstOnceDue() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let a = try (0..<3).map { _ in try makeTransfer(hostA) }
        let b = try makeTransfer(hostB)
        a.forEach { scheduler.enqueue($0) }
        scheduler.enqueue(b)

        XCTAssertEqual(scheduler.next(now: 0)?.id, a[0].id)
        scheduler.didStop(hostKey: a[0].hostKey)
        scheduler.enqueue(a[0], startAt: 100)

        XCTAssertEqual(scheduler.next(now: 50)?.id, a[1].id, "the retry started before its start-at time")
        XCTAssertEqual(scheduler.next(now: 100)?.id, a[0].id, "a due retry did not go first")
        XCTAssertEqual(drain(&scheduler, now: 100), [a[2].id, b.id])
    }

    func testFIFOReleasesSeveralDueRetriesInTheirOriginalOrder() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let a = try (0..<3).map { _ in try makeTransfer(hostA) }
        a.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[0].id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[1].id)
        scheduler.didStop(hostKey: hostKey(hostA))
        scheduler.didStop(hostKey: hostKey(hostA))
        // Both fail; the older one is rescheduled first, and both are due by the next look.
        scheduler.enqueue(a[0], startAt: 100)
        scheduler.enqueue(a[1], startAt: 100)
        XCTAssertEqual(drain(&scheduler, now: 100), [a[0].id, a[1].id, a[2].id])
    }

    func testLIFORetryBecomesTheNewestOnceDue() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 10)
        let a = try (0..<3).map { _ in try makeTransfer(hostA) }
        a.forEach { scheduler.enqueue($0) }

        XCTAssertEqual(scheduler.next(now: 0)?.id, a[2].id)
        scheduler.didStop(hostKey: a[2].hostKey)
        scheduler.enqueue(a[2], startAt: 100)
        // A request that arrives while the retry waits is still older than the retry once it is due.
        let late = try makeTransfer(hostB)
        scheduler.enqueue(late)

        XCTAssertEqual(scheduler.next(now: 100)?.id, a[2].id)
        XCTAssertEqual(drain(&scheduler, now: 100), [late.id, a[1].id, a[0].id])
    }

    func testRetryRespectsThePerHostCap() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let running = try makeTransfer(hostA)
        let retry = try makeTransfer(hostA)
        scheduler.enqueue(running)
        XCTAssertEqual(scheduler.next(now: 0)?.id, running.id)
        scheduler.enqueue(retry, startAt: 10)
        XCTAssertNil(scheduler.next(now: 20))
        scheduler.didStop(hostKey: running.hostKey)
        XCTAssertEqual(scheduler.next(now: 20)?.id, retry.id)
    }

    func testNextStartAtIsTheEarliest() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        XCTAssertNil(scheduler.nextStartAt)
        scheduler.enqueue(try makeTransfer(hostA), startAt: 300)
        scheduler.enqueue(try makeTransfer(hostB), startAt: 100)
        scheduler.enqueue(try makeTransfer(hostA), startAt: 200)
        XCTAssertEqual(scheduler.nextStartAt, 100)
        XCTAssertNotNil(scheduler.next(now: 150))
        XCTAssertEqual(scheduler.nextStartAt, 200)
        XCTAssertNotNil(scheduler.next(now: 250))
        XCTAssertEqual(scheduler.nextStartAt, 300)
    }

    // MARK: - isEmpty and counts

    func testIsEmptyAndPendingCount() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        XCTAssertTrue(scheduler.isEmpty)
        XCTAssertNil(scheduler.next(now: 0))
        let transfer = try makeTransfer(hostA)
        scheduler.enqueue(transfer)
        XCTAssertFalse(scheduler.isEmpty)
        XCTAssertEqual(scheduler.pendingCount, 1)
        XCTAssertNotNil(scheduler.next(now: 0))
        XCTAssertTrue(scheduler.isEmpty, "a running transfer is not pending")
        XCTAssertEqual(scheduler.pendingCount, 0)
    }

    // MARK: - Priority classes

    func testHigherClassesStartFirstAcrossHostsInFIFO() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let hostC = "http://c.example"
        let low1 = try makeTransfer(hostA, priority: .low)
        let normal1 = try makeTransfer(hostB)
        let high1 = try makeTransfer(hostC, priority: .high)
        let low2 = try makeTransfer(hostB, priority: .low)
        let high2 = try makeTransfer(hostA, priority: .high)
        let normal2 = try makeTransfer(hostC)
        let high3 = try makeTransfer(hostB, priority: .high)
        [low1, normal1, high1, low2, high2, normal2, high3].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), [high1, high2, high3, normal1, normal2, low1, low2].map(\.id))
    }

    func testHigherClassesStartFirstAcrossHostsInLIFO() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 10)
        let high1 = try makeTransfer(hostA, priority: .high)
        let low1 = try makeTransfer(hostB, priority: .low)
        let normal1 = try makeTransfer(hostA)
        let high2 = try makeTransfer(hostB, priority: .high)
        let low2 = try makeTransfer(hostA, priority: .low)
        let normal2 = try makeTransfer(hostB)
        [high1, low1, normal1, high2, low2, normal2].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), [high2, high1, normal2, normal1, low2, low1].map(\.id))
    }

    func testALateHighJumpsAheadOfPendingNormals() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let normals = try [hostA, hostB, hostA, hostB].map { try makeTransfer($0) }
        normals.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, normals[0].id)
        let high = try makeTransfer(hostB, priority: .high)
        scheduler.enqueue(high)
        XCTAssertEqual(scheduler.next(now: 0)?.id, high.id, "a high request read late must go before older normals")
        let low = try makeTransfer(hostA, priority: .low)
        scheduler.enqueue(low)
        XCTAssertEqual(drain(&scheduler), normals.dropFirst().map(\.id) + [low.id])
    }

    func testAHighOnAFullHostWaitsWithoutBlockingOtherHosts() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let running = try makeTransfer(hostA)
        scheduler.enqueue(running)
        XCTAssertEqual(scheduler.next(now: 0)?.id, running.id)
        let high = try makeTransfer(hostA, priority: .high)
        let normal = try makeTransfer(hostB)
        let low = try makeTransfer(hostB, priority: .low)
        [high, normal, low].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, normal.id, "host A is full, so host B's best goes")
        XCTAssertNil(scheduler.next(now: 0), "host B is full too")
        scheduler.didStop(hostKey: running.hostKey)
        XCTAssertEqual(scheduler.next(now: 0)?.id, high.id)
        scheduler.didStop(hostKey: normal.hostKey)
        XCTAssertEqual(scheduler.next(now: 0)?.id, low.id)
    }

    func testADueRetryOfALowerClassStaysBehindAHigherClass() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let low = try makeTransfer(hostA, priority: .low)
        scheduler.enqueue(low)
        XCTAssertEqual(scheduler.next(now: 0)?.id, low.id)
        scheduler.didStop(hostKey: low.hostKey)
        scheduler.enqueue(low, startAt: 100)
        let high = try makeTransfer(hostB, priority: .high)
        let normal = try makeTransfer(hostA)
        scheduler.enqueue(high)
        scheduler.enqueue(normal)
        XCTAssertEqual(drain(&scheduler, now: 100), [high.id, normal.id, low.id])
    }

    func testFIFOWithinEachClassOnOneHost() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 100)
        let transfers = try (0..<30).map { try makeTransfer(hostA, priority: RequestPriority.allCases[$0 % 3]) }
        transfers.forEach { scheduler.enqueue($0) }
        let expected = RequestPriority.allCases.flatMap { priority in transfers.filter { $0.priority == priority }.map(\.id) }
        XCTAssertEqual(drain(&scheduler), expected)
    }

    func testLIFOWithinEachClassOnOneHost() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 100)
        let transfers = try (0..<30).map { try makeTransfer(hostA, priority: RequestPriority.allCases[$0 % 3]) }
        transfers.forEach { scheduler.enqueue($0) }
        let expected = RequestPriority.allCases.flatMap { priority in transfers.reversed().filter { $0.priority == priority }.map(\.id) }
        XCTAssertEqual(drain(&scheduler), expected)
    }

    /// A list streaming in under --lifo: after every few lines read, the newest pending request goes next.
    func testLIFOWhileItemsKeepArriving() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 100)
        var pending: [Transfer] = []
        var started: [Int] = []
        var expected: [Int] = []
        for batch in 0..<50 {
            for index in 0..<(batch % 4 + 1) {
                let transfer = try makeTransfer(index.isMultiple(of: 2) ? hostA : hostB)
                scheduler.enqueue(transfer)
                pending.append(transfer)
            }
            if let transfer = scheduler.next(now: 0) { started.append(transfer.id) }
            expected.append(pending.removeLast().id)
        }
        started += drain(&scheduler)
        expected += pending.reversed().map(\.id)
        XCTAssertEqual(started, expected)
    }

    func testLIFOWithClassesWhileItemsKeepArriving() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 10)
        let normal1 = try makeTransfer(hostA)
        let normal2 = try makeTransfer(hostB)
        [normal1, normal2].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, normal2.id)
        let low = try makeTransfer(hostA, priority: .low)
        let high = try makeTransfer(hostB, priority: .high)
        let normal3 = try makeTransfer(hostA)
        [low, high, normal3].forEach { scheduler.enqueue($0) }
        XCTAssertEqual(scheduler.next(now: 0)?.id, high.id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, normal3.id)
        let normal4 = try makeTransfer(hostB)
        scheduler.enqueue(normal4)
        XCTAssertEqual(drain(&scheduler), [normal4.id, normal1.id, low.id])
    }

    /// Random enqueues, starts, stops and cancellations against a plain reference: the best
    /// startable request is the lowest (class, FIFO age or LIFO newness) on a host below its cap.
    func testMatchesAReferenceModelUnderRandomOperations() throws {
        for order in [ExecutionOrder.fifo, .lifo] {
            for seed: UInt64 in 1...8 {
                var random = SplitMix64(seed: seed)
                var scheduler = TransferScheduler(order: order, perHost: 2)
                let origins = (0..<4).map { "http://h\($0).example" }
                var pending: [(transfer: Transfer, sequence: Int)] = []
                var running: [Transfer] = []
                var sequence = 0
                for step in 0..<2_000 {
                    switch random.next() % 10 {
                    case 0..<4:
                        let transfer = try makeTransfer(origins[Int(random.next() % 4)], priority: RequestPriority.allCases[Int(random.next() % 3)])
                        scheduler.enqueue(transfer)
                        pending.append((transfer, sequence))
                        sequence += 1
                    case 4..<7:
                        let busy = Dictionary(grouping: running, by: \.hostKey).mapValues(\.count)
                        let best = pending.enumerated()
                            .filter { !$0.element.transfer.isCancelled && busy[$0.element.transfer.hostKey, default: 0] < 2 }
                            .min { lhs, rhs in
                                let l = (lhs.element.transfer.priority.rankFromHighest, order == .fifo ? lhs.element.sequence : -lhs.element.sequence)
                                let r = (rhs.element.transfer.priority.rankFromHighest, order == .fifo ? rhs.element.sequence : -rhs.element.sequence)
                                return l < r
                            }
                        let next = scheduler.next(now: 0)
                        XCTAssertEqual(next?.id, best?.element.transfer.id, "\(order) seed \(seed) step \(step)")
                        guard let next, let best, next.id == best.element.transfer.id else { return }
                        pending.remove(at: best.offset)
                        running.append(next)
                    case 7..<9:
                        guard !running.isEmpty else { continue }
                        let stopped = running.remove(at: Int(random.next() % UInt64(running.count)))
                        scheduler.didStop(hostKey: stopped.hostKey)
                    default:
                        guard !pending.isEmpty else { continue }
                        pending[Int(random.next() % UInt64(pending.count))].transfer.stage = .cancelled
                    }
                }
            }
        }
    }

    // MARK: - Scale

    /// A million pending requests across 1,000 hosts, drained under a per-host cap of 6: every
    /// request starts once, no host ever runs more than 6, and each host's starts keep class and FIFO order.
    func testAMillionPendingRequestsDrainUnderPerHostCaps() throws {
        let hostCount = 1_000
        let total = 1_000_000
        let perHost = 6
        let urls = try (0..<hostCount).map { try ParsedURL("http://host\($0).example/image.jpg") }
        var scheduler = TransferScheduler(order: .fifo, perHost: perHost)
        let clock = ContinuousClock()
        let start = clock.now
        for id in 0..<total {
            scheduler.enqueue(Transfer(id: id, url: urls[id % hostCount], directory: TempFileDirectory(path: "/nonexistent"), maxSize: 1,
                                       priority: RequestPriority.allCases[(id / hostCount) % 3], onFinish: { _ in }))
        }
        let enqueued = clock.now
        XCTAssertEqual(scheduler.pendingCount, total)

        var started = 0
        var rounds = 0
        var last = [(rank: Int, id: Int)](repeating: (-1, -1), count: hostCount)
        var running: [Transfer] = []
        var outOfOrder = 0
        while !scheduler.isEmpty {
            var perHostNow = [Int](repeating: 0, count: hostCount)
            while let transfer = scheduler.next(now: 0) {
                let host = transfer.id % hostCount
                perHostNow[host] += 1
                let place = (rank: transfer.priority.rankFromHighest, id: transfer.id)
                if place < last[host] { outOfOrder += 1 }
                last[host] = place
                running.append(transfer)
            }
            XCTAssertLessThanOrEqual(perHostNow.max() ?? 0, perHost, "a host ran more than \(perHost) at once")
            guard !running.isEmpty else { return XCTFail("the scheduler holds requests but starts none") }
            started += running.count
            rounds += 1
            for transfer in running { scheduler.didStop(hostKey: transfer.hostKey) }
            running.removeAll(keepingCapacity: true)
        }
        let drained = clock.now
        XCTAssertEqual(started, total)
        XCTAssertEqual(outOfOrder, 0, "a host started a request before a better one of its own")
        XCTAssertEqual(rounds, (total / hostCount + perHost - 1) / perHost)
        print("scheduler scale: \(total) enqueues across \(hostCount) hosts in \(enqueued - start), "
              + "drained in \(rounds) rounds in \(drained - enqueued)")
    }

    // MARK: - Helpers

    private func makeTransfer(_ origin: String, priority: RequestPriority = .normal) throws -> Transfer {
        nextID += 1
        return Transfer(id: nextID, url: try ParsedURL("\(origin)/image-\(nextID).jpg"), directory: TempFileDirectory(path: "/nonexistent"),
                        maxSize: 1 << 20, priority: priority, onFinish: { _ in })
    }

    private func hostKey(_ origin: String) -> String {
        (try? ParsedURL(origin + "/"))?.origin ?? origin
    }

    /// Every transfer `next` returns until it returns nil, each counted as running.
    private func drain(_ scheduler: inout TransferScheduler, now: UInt64 = 0) -> [Int] {
        var ids: [Int] = []
        while let transfer = scheduler.next(now: now) { ids.append(transfer.id) }
        return ids
    }
}

final class TransferSchedulerHostGateTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private var nextID = 0

    private func makeTransfer(_ origin: String) throws -> Transfer {
        nextID += 1
        return Transfer(id: nextID, url: try ParsedURL("\(origin)/image-\(nextID).jpg"), directory: TempFileDirectory(path: "/nonexistent"),
                        maxSize: 1 << 20, onFinish: { _ in })
    }

    func testARateParksTheHostAndAnotherHostGoesMeanwhile() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10, hostPolicy: HostGates.Policy(rate: 1))
        let a = try (0..<3).map { _ in try makeTransfer("http://a.example") }
        let b = try makeTransfer("http://b.example")
        a.forEach { scheduler.enqueue($0) }
        scheduler.enqueue(b)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[0].id)
        XCTAssertEqual(scheduler.next(now: 0)?.id, b.id, "host A waits for its next token; B goes")
        XCTAssertNil(scheduler.next(now: 0))
        XCTAssertEqual(scheduler.nextStartAt, second, "the engine wakes when A's next token comes")
        XCTAssertNil(scheduler.next(now: second - 1))
        XCTAssertEqual(scheduler.next(now: second)?.id, a[1].id)
        XCTAssertNil(scheduler.next(now: second))
        XCTAssertEqual(scheduler.next(now: 2 * second)?.id, a[2].id)
        XCTAssertTrue(scheduler.isEmpty)
    }

    func testAPausedHostKeepsItsPlaceInLine() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 10)
        let first = try makeTransfer("http://a.example")
        let later = try makeTransfer("http://b.example")
        scheduler.enqueue(first)
        scheduler.enqueue(later)
        _ = scheduler.record(.slowDown(status: 429, retryAfter: 5), host: first.hostKey, now: 0)
        XCTAssertEqual(scheduler.next(now: 0)?.id, later.id)
        XCTAssertNil(scheduler.next(now: 4 * second))
        XCTAssertEqual(scheduler.next(now: 5 * second)?.id, first.id)
    }

    func testRemovingAHostTakesItsPendingAndHeldBackTransfers() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let a = try (0..<3).map { _ in try makeTransfer("http://a.example") }
        let b = try makeTransfer("http://b.example")
        a.forEach { scheduler.enqueue($0) }
        scheduler.enqueue(b)
        XCTAssertEqual(scheduler.next(now: 0)?.id, a[0].id)
        scheduler.didStop(hostKey: a[0].hostKey)
        scheduler.enqueue(a[0], startAt: 10 * second)  // a retry waiting
        a[2].stage = .cancelled
        let removed = scheduler.removeAll(of: a[0].hostKey)
        XCTAssertEqual(Set(removed.map(\.id)), [a[0].id, a[1].id], "the cancelled one is dropped, not returned")
        XCTAssertEqual(scheduler.next(now: 20 * second)?.id, b.id)
        XCTAssertNil(scheduler.next(now: 20 * second))
        XCTAssertTrue(scheduler.isEmpty)
    }
}
