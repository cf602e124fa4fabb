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
        transfers[1].isCancelled = true
        transfers[3].isCancelled = true
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
        cancelled.isCancelled = true
        XCTAssertEqual(scheduler.next(now: 0)?.id, live.id)
    }

    func testCancelledRetryIsSkippedOnceDue() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1)
        let transfer = try makeTransfer(hostA)
        scheduler.enqueue(transfer, startAt: 10)
        transfer.isCancelled = true
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

    // MARK: - Helpers

    private func makeTransfer(_ origin: String) throws -> Transfer {
        nextID += 1
        return Transfer(id: nextID, url: try ParsedURL("\(origin)/image-\(nextID).jpg"), directory: "/nonexistent",
                        maxSize: 1 << 20, onFinish: { _ in })
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
