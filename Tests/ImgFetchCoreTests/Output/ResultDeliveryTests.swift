import Dispatch
import Foundation
import XCTest
import Synchronization
@testable import ImgFetchCore

/// The output stage's executor: jobs run on its own thread, in order, each once the index has
/// committed through its ticket.
final class ResultDeliveryTests: XCTestCase {
    func testAJobWaitsForItsTicketAndOthersGoAhead() {
        let delivery = ResultDelivery()
        let ran = LockedState<[String]>([])
        let ready = DispatchSemaphore(value: 0)
        delivery.submit(after: 5) { ran.withLock { $0.append("needs 5") }; ready.signal() }
        delivery.submit { ran.withLock { $0.append("needs nothing") }; ready.signal() }
        XCTAssertEqual(ready.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ran.withLock { $0 }, ["needs nothing"], "a job without a ticket must not wait behind one with a ticket")
        delivery.committed(through: 4)
        XCTAssertEqual(ready.wait(timeout: .now() + 0.2), .timedOut, "ran before its ticket was committed")
        delivery.committed(through: 5)
        XCTAssertEqual(ready.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ran.withLock { $0 }, ["needs nothing", "needs 5"])
        delivery.close()
    }

    func testReadyJobsRunInTheOrderTheyWereQueuedOnTheDeliveryThread() {
        let delivery = ResultDelivery()
        let ran = LockedState<[Int]>([])
        let threads = LockedState<Set<String>>([])
        for number in 0..<1000 {
            delivery.submit(after: UInt64(number % 3)) {
                ran.withLock { $0.append(number) }
                _ = threads.withLock { $0.insert(Self.threadName()) }
            }
        }
        delivery.committed(through: 2)
        delivery.close()
        XCTAssertEqual(ran.withLock { $0 }.count, 1000)
        XCTAssertEqual(ran.withLock { $0.filter { $0 % 3 == 2 } }, Array(stride(from: 2, to: 1000, by: 3)))
        XCTAssertEqual(threads.withLock { $0 }, ["imgfetch.output"])
    }

    func testCloseRunsEveryJobEvenIfItsTicketWasNeverAnnounced() {
        let delivery = ResultDelivery()
        let ran = Atomic<Int>(0)
        for _ in 0..<10 { delivery.submit(after: 99) { ran.add(1, ordering: .relaxed) } }
        delivery.close()
        XCTAssertEqual(ran.load(ordering: .relaxed), 10)
    }

    func testAJobMayCloseItsOwnExecutor() {
        let delivery = ResultDelivery()
        let done = DispatchSemaphore(value: 0)
        delivery.submit {
            delivery.close()
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "close() from a job waited for its own thread")
    }

    private static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }
}
