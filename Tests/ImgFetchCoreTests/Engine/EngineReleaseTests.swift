import XCTest
@testable import ImgFetchCore

/// When a release from the decode stage wakes the engine thread (whose admission a full backlog stops).
final class EngineReleaseTests: XCTestCase {
    /// The releases (by the count before each) that wake the engine while the backlog drains from `start` to 0.
    private func wakes(from start: Int, backlog: Int) -> [Int] {
        stride(from: start, to: 0, by: -1).filter { Engine.releaseWakesEngine(before: $0, backlog: backlog) }
    }

    func testADrainingFullBacklogWakesTheEngineOnceAQuarterHasGone() {
        XCTAssertEqual(wakes(from: 32, backlog: 32), [25], "one wake, when 24 bodies are left for the decoders")
    }

    func testABacklogOverfilledByRunningTransfersStillWakesOnce() {
        XCTAssertEqual(wakes(from: 48, backlog: 32), [25])
    }

    func testABacklogThatNeverFilledNeverWakes() {
        XCTAssertEqual(wakes(from: 24, backlog: 32), [])
    }

    func testTinyBacklogsWakeAtTheFirstRelease() {
        XCTAssertEqual(wakes(from: 1, backlog: 1), [1])
        XCTAssertEqual(wakes(from: 3, backlog: 3), [3])
        XCTAssertEqual(wakes(from: 4, backlog: 4), [4])
        XCTAssertEqual(wakes(from: 8, backlog: 8), [7])
    }
}
