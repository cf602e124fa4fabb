import XCTest
@testable import ImgFetchCore

/// The per-host rule of issue 13: `perHost` caps connections; a host known to multiplex runs up to
/// `perHost` × `streamsPerConnection` transfers, in the same order as before.
final class TransferSchedulerMultiplexingTests: XCTestCase {
    private let hostA = "https://a.example"
    private let hostB = "https://b.example"
    private var nextID = 0

    func testUnknownHostRunsPerHostTransfers() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 2, streamsPerConnection: 100)
        try (0..<5).forEach { _ in scheduler.enqueue(try makeTransfer(hostA)) }
        XCTAssertEqual(drain(&scheduler).count, 2)
        XCTAssertEqual(scheduler.limit(for: key(hostA)), 2)
    }

    func testAMultiplexingHostAdmitsStreamsUpToPerHostTimesStreams() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 2, streamsPerConnection: 3)
        let transfers = try (0..<10).map { _ in try makeTransfer(hostA) }
        transfers.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), transfers.prefix(2).map(\.id))
        scheduler.learn(host: key(hostA), multiplexes: true)
        // The order holds: the next four in line, and no more than 2 × 3 at once.
        XCTAssertEqual(drain(&scheduler), transfers[2..<6].map(\.id))
        XCTAssertEqual(scheduler.limit(for: key(hostA)), 6)
    }

    func testLearningIsPerHost() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1, streamsPerConnection: 10)
        try (0..<4).forEach { _ in scheduler.enqueue(try makeTransfer(hostA)) }
        try (0..<4).forEach { _ in scheduler.enqueue(try makeTransfer(hostB)) }
        scheduler.learn(host: key(hostB), multiplexes: true)
        let started = drain(&scheduler)
        XCTAssertEqual(started.count, 1 + 4, "host A stays at one transfer, host B runs all four")
    }

    func testHostThatStopsMultiplexingGoesBackToPerHostForNewTransfers() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1, streamsPerConnection: 10)
        let transfers = try (0..<6).map { _ in try makeTransfer(hostA) }
        transfers.forEach { scheduler.enqueue($0) }
        scheduler.learn(host: key(hostA), multiplexes: true)
        XCTAssertEqual(drain(&scheduler).count, 6)
        // The server turned h2 off: running transfers stay, but nothing new starts until one slot is free.
        scheduler.learn(host: key(hostA), multiplexes: false)
        let more = try (0..<2).map { _ in try makeTransfer(hostA) }
        more.forEach { scheduler.enqueue($0) }
        XCTAssertNil(scheduler.next(now: 0))
        for transfer in transfers { scheduler.didStop(hostKey: transfer.hostKey) }
        XCTAssertEqual(drain(&scheduler), [more[0].id])
    }

    func testWhatWasLearnedOutlivesAnIdleHost() throws {
        var scheduler = TransferScheduler(order: .lifo, perHost: 1, streamsPerConnection: 4)
        let first = try makeTransfer(hostA)
        scheduler.enqueue(first)
        XCTAssertEqual(drain(&scheduler), [first.id])
        scheduler.learn(host: key(hostA), multiplexes: true)
        scheduler.didStop(hostKey: first.hostKey)
        XCTAssertTrue(scheduler.isEmpty)
        let later = try (0..<5).map { _ in try makeTransfer(hostA) }
        later.forEach { scheduler.enqueue($0) }
        XCTAssertEqual(drain(&scheduler), later.suffix(4).reversed().map(\.id))
    }

    func testLearningTheSameThingTwiceChangesNothing() throws {
        var scheduler = TransferScheduler(order: .fifo, perHost: 1, streamsPerConnection: 2)
        try (0..<3).forEach { _ in scheduler.enqueue(try makeTransfer(hostA)) }
        scheduler.learn(host: key(hostA), multiplexes: true)
        scheduler.learn(host: key(hostA), multiplexes: true)
        XCTAssertEqual(drain(&scheduler).count, 2)
    }

    // MARK: - Helpers

    private func makeTransfer(_ origin: String) throws -> Transfer {
        nextID += 1
        return Transfer(id: nextID, url: try ParsedURL("\(origin)/image-\(nextID).jpg"), directory: TempFileDirectory(path: "/nonexistent"),
                        maxSize: 1 << 20, onFinish: { _ in })
    }

    private func key(_ origin: String) -> String {
        (try? ParsedURL(origin + "/"))?.origin ?? origin
    }

    private func drain(_ scheduler: inout TransferScheduler) -> [Int] {
        var ids: [Int] = []
        while let transfer = scheduler.next(now: 0) { ids.append(transfer.id) }
        return ids
    }
}
