import Dispatch
import Foundation
import XCTest
@testable import ImgFetchCLI

/// RunControl wakes its waiters only when they can proceed; these check that each one still does.
final class RunControlTests: XCTestCase {
    /// Runs `body` on a new thread and returns a semaphore signalled when it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done
    }

    func testTheReaderAtTheLimitResumesWhenAnItemFinishes() {
        let control = RunControl(maxOutstanding: 3)
        for _ in 0..<3 { XCTAssertTrue(control.admit()) }
        let admitted = onThread { XCTAssertTrue(control.admit()) }
        XCTAssertEqual(admitted.wait(timeout: .now() + 0.2), .timedOut, "admitted past the limit")
        control.itemDone()
        XCTAssertEqual(admitted.wait(timeout: .now() + 5), .success)
    }

    func testTheReaderWaitsAgainAtEveryLimit() {
        let control = RunControl(maxOutstanding: 2)
        for _ in 0..<2 { XCTAssertTrue(control.admit()) }
        for _ in 0..<50 {
            let admitted = onThread { XCTAssertTrue(control.admit()) }
            control.itemDone()
            XCTAssertEqual(admitted.wait(timeout: .now() + 5), .success)
        }
    }

    func testTheRunCompletesWhenTheLastItemFinishesAfterTheList() {
        let control = RunControl(maxOutstanding: 100)
        for _ in 0..<10 { XCTAssertTrue(control.admit()) }
        let ended = onThread { XCTAssertEqual(control.waitForEnding(), .completed) }
        control.listFinished()
        for _ in 0..<9 { control.itemDone() }
        XCTAssertEqual(ended.wait(timeout: .now() + 0.2), .timedOut, "completed with an item outstanding")
        control.itemDone()
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success)
    }

    func testTheRunCompletesWhenTheListEndsAfterTheLastItem() {
        let control = RunControl(maxOutstanding: 100)
        XCTAssertTrue(control.admit())
        control.itemDone()
        let ended = onThread { XCTAssertEqual(control.waitForEnding(), .completed) }
        control.listFinished()
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success)
    }

    func testWaitForOutstandingReturnsOnceEveryItemFinished() {
        let control = RunControl(maxOutstanding: 100)
        for _ in 0..<5 { XCTAssertTrue(control.admit()) }
        control.stop(.interrupted(signal: SIGINT))
        XCTAssertFalse(control.admit(), "a stopped run admits nothing")
        let drained = onThread { control.waitForOutstanding() }
        for _ in 0..<4 { control.itemDone() }
        XCTAssertEqual(drained.wait(timeout: .now() + 0.2), .timedOut)
        control.itemDone()
        XCTAssertEqual(drained.wait(timeout: .now() + 5), .success)
    }

    func testAStopWakesTheReaderWaitingAtTheLimit() {
        let control = RunControl(maxOutstanding: 1)
        XCTAssertTrue(control.admit())
        let refused = onThread { XCTAssertFalse(control.admit()) }
        control.stop(.brokenPipe)
        XCTAssertEqual(refused.wait(timeout: .now() + 5), .success)
    }
}
