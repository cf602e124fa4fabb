import XCTest
@testable import ImgFetchCore

final class ConditionLockTests: XCTestCase {
    func testTimedWaitReturnsFalseOnceTheDeadlinePasses() {
        let condition = ConditionLock()
        condition.lock()
        let deadline = ConditionLock.Deadline(secondsFromNow: 0.02)
        var timedOut = false
        // Spurious wake-ups return true; only the deadline ends the loop.
        while !timedOut { timedOut = !condition.wait(until: deadline) }
        condition.unlock()
        XCTAssertTrue(timedOut)
    }

    func testAnyDoubleMakesAValidDeadline() {
        let condition = ConditionLock()
        condition.lock()
        // A deadline in the past, NaN or negative infinity: the wait times out at once.
        for seconds in [-1.0, -Double.infinity, Double.nan, 0] {
            XCTAssertFalse(condition.wait(until: ConditionLock.Deadline(secondsFromNow: seconds)), "\(seconds)")
        }
        condition.unlock()
        // Far deadlines (clamped) are constructed without trapping.
        _ = ConditionLock.Deadline(secondsFromNow: .infinity)
        _ = ConditionLock.Deadline(secondsFromNow: 1e300)
    }

    func testSignalWakesAWaiterOnAnotherThread() {
        let condition = ConditionLock()
        nonisolated(unsafe) var ready = false
        let woke = DispatchSemaphore(value: 0)
        startThread(name: "test.waiter") {
            condition.lock()
            while !ready { condition.wait() }
            condition.unlock()
            woke.signal()
        }
        condition.withLock {
            ready = true
            condition.signal()
        }
        XCTAssertEqual(woke.wait(timeout: .now() + 10), .success)
    }

    func testStartThreadNamesTheThread() {
        nonisolated(unsafe) var name = ""
        let done = DispatchSemaphore(value: 0)
        startThread(name: "imgfetch.a-name-longer-than-15") {
            name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(name, "imgfetch.a-name\n")
    }
}
