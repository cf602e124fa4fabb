import XCTest
import Synchronization
@testable import ImgFetchCore

/// Progress throttling happens where progress is born: in the transfer's write callback.
/// No wall-clock assertions: an interval of one hour lets only the first and the final event through.
final class ProgressThrottleTests: XCTestCase {
    private var directory: ScratchDirectory!
    private let oneHour: UInt64 = 3_600 * 1_000_000_000

    override func setUpWithError() throws {
        directory = try ScratchDirectory(prefix: "imgfetch-progress")
    }

    override func tearDown() {
        directory.remove()
    }

    func testWithinTheIntervalOnlyTheFirstAndTheFinalEventPass() throws {
        let (transfer, events) = try makeTransfer(interval: oneHour, contentLength: 100_000)
        feed(transfer, chunks: 1_000, size: 100)
        transfer.progress.reportFinal(bytes: transfer.body.bytes)
        XCTAssertEqual(events.all, [Event(received: 100, expected: 100_000), Event(received: 100_000, expected: 100_000)],
                       "1,000 chunks within one interval must give the first event and the final one")
    }

    /// The first event must not depend on how long the machine has been up: an interval longer
    /// than any uptime still lets the first chunk's event through.
    func testTheFirstEventPassesWhateverTheMonotonicClockReads() throws {
        let hundredYears: UInt64 = 100 * 365 * 86_400 * 1_000_000_000
        let (transfer, events) = try makeTransfer(interval: hundredYears, contentLength: nil)
        feed(transfer, chunks: 3, size: 10)
        XCTAssertEqual(events.all, [Event(received: 10, expected: nil)])
    }

    func testTheFinalEventIsAlwaysDelivered() throws {
        let (transfer, events) = try makeTransfer(interval: oneHour, contentLength: nil)
        feed(transfer, chunks: 50, size: 10)
        transfer.progress.reportFinal(bytes: transfer.body.bytes)
        XCTAssertLessThanOrEqual(events.all.count, 2)
        XCTAssertEqual(events.all.last, Event(received: 500, expected: 500), "the final event reports the complete size")
    }

    func testNothingIsReportedWhileNoCallerWantsProgress() throws {
        let (transfer, events) = try makeTransfer(interval: 0, contentLength: nil)
        transfer.progress.wanted.store(false, ordering: .relaxed)
        feed(transfer, chunks: 5, size: 10)
        transfer.progress.reportFinal(bytes: transfer.body.bytes)
        XCTAssertEqual(events.all, [])
    }

    func testWithoutAnIntervalEveryChunkIsReported() throws {
        let (transfer, events) = try makeTransfer(interval: 0, contentLength: nil)
        feed(transfer, chunks: 20, size: 10)
        transfer.progress.reportFinal(bytes: transfer.body.bytes)
        XCTAssertEqual(events.all.map(\.received), Array(stride(from: 10, through: 200, by: 10)) + [200])
        XCTAssertEqual(events.all.dropLast().map(\.expected), Array(repeating: nil, count: 20))
    }

    func testErrorBodiesReportNoProgress() throws {
        let (transfer, events) = try makeTransfer(interval: 0, contentLength: nil)
        transfer.response.status = 404
        feed(transfer, chunks: 5, size: 10)
        XCTAssertEqual(events.all, [])
        XCTAssertEqual(transfer.body.bytes, 0)
    }

    // MARK: - Helpers

    struct Event: Equatable {
        let received: Int64
        let expected: Int64?
    }

    /// Progress events from the transfer's callback.
    final class EventLog: Sendable {
        private let events = LockedState<[Event]>([])
        func append(_ event: Event) { events.withLock { $0.append(event) } }
        var all: [Event] { events.withLock { $0 } }
    }

    /// A transfer in the state the engine leaves it in after a 200 response's headers.
    private func makeTransfer(interval: UInt64, contentLength: Int64?) throws -> (Transfer, EventLog) {
        let transfer = Transfer(id: 1, url: try ParsedURL("http://example.com/a.jpg"), directory: TempFileDirectory(path: directory.path),
                                maxSize: 1 << 30, onFinish: { _ in })
        transfer.body.tempFile = try TempFile.create(in: directory.path)
        transfer.response.status = 200
        transfer.response.contentLength = contentLength
        transfer.progress.interval = interval
        let events = EventLog()
        transfer.progress.handler = { events.append(Event(received: $0, expected: $1)) }
        transfer.progress.wanted.store(true, ordering: .relaxed)
        return (transfer, events)
    }

    private func feed(_ transfer: Transfer, chunks: Int, size: Int) {
        let chunk = [UInt8](repeating: 0xAB, count: size)
        for _ in 0..<chunks {
            let taken = chunk.withUnsafeBytes { transfer.receiveBody($0) }
            XCTAssertEqual(taken, size)
        }
    }
}
