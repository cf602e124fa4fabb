import Synchronization
import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

final class BarStatusDisplayTests: XCTestCase {
    private let sink = BufferSink()

    private func display(screenIsShared: (@Sendable () -> Bool)?) -> BarStatusDisplay {
        let model = ProgressModel(now: monotonicSeconds())
        model.itemQueued()
        let renderer = TerminalProgressRenderer(sink: sink, columns: { 80 }, colors: false)
        return BarStatusDisplay(renderer: renderer, model: model, screenIsShared: screenIsShared)
    }

    /// Polls for up to `seconds`; the frames come from a timer.
    private func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + seconds
        while monotonicSeconds() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    func testAReaderOnTheSameScreenGetsItWithoutASingleFrame() {
        let asked = Atomic<Int>(0)
        let display = display(screenIsShared: { asked.add(1, ordering: .relaxed).newValue >= 2 })
        // The reader is found on the second look; no frame was drawn before it.
        XCTAssertTrue(waitFor(5) { asked.load(ordering: .relaxed) >= 2 })
        usleep(300_000)
        display.message("failed http://x/a.jpg: HTTP 404\n")
        display.finish(summary: "summary")
        XCTAssertEqual(sink.text, "failed http://x/a.jpg: HTTP 404\nsummary\n")
        XCTAssertEqual(asked.load(ordering: .relaxed), 2, "settled once found")
    }

    func testWithoutAReaderTheAreaAppearsAfterTheGraceAndTheChecksStop() {
        let asked = Atomic<Int>(0)
        let display = display(screenIsShared: { asked.add(1, ordering: .relaxed); return false })
        XCTAssertTrue(waitFor(5) { sink.text.contains("0/1") }, "no frame")
        XCTAssertTrue(waitFor(5) { asked.load(ordering: .relaxed) >= 5 })
        usleep(2_500_000)
        let settled = asked.load(ordering: .relaxed)
        XCTAssertLessThanOrEqual(settled, 6, "a few looks in the first two seconds, not one per frame")
        usleep(300_000)
        XCTAssertEqual(asked.load(ordering: .relaxed), settled)
        display.finish(summary: nil)
    }

    func testWithoutACheckTheFirstFrameIsDrawnAtOnce() {
        let display = display(screenIsShared: nil)
        XCTAssertTrue(waitFor(5) { sink.text.contains("0/1") })
        display.finish(summary: nil)
    }
}
