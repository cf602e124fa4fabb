import CImageCodec
import Dispatch
import XCTest
@testable import ImgFetchCore

/// The decode stage's memory budget: header estimates, and which decodes may run together.
final class DecodeMemoryBudgetTests: XCTestCase {
    // MARK: - Estimates from the header

    private func decoder(for bytes: [UInt8], _ format: ImageFormat) throws -> ImageDecoder {
        try bytes.withUnsafeBytes { try ImageDecoder(source: .memory($0), format: format, limits: DecodeLimits()) }
    }

    func testProgressiveJPEGEstimateCoversItsCoefficientBuffers() throws {
        // 640×480 at 4:2:0: Y has 80×60 blocks, Cb and Cr 40×30 each, 128 bytes a block.
        let pixels = Fixtures.gradient(width: 640, height: 480, channels: 3)
        let progressive = try Fixtures.jpeg(pixels, width: 640, height: 480, options: Fixtures.jpegOptions(progressive: true))
        let coefficients = (80 * 60 + 2 * 40 * 30) * 128
        let estimate = try decoder(for: progressive, .jpeg).decodeMemory
        XCTAssertGreaterThanOrEqual(estimate, coefficients)
        XCTAssertLessThan(estimate, coefficients + (1 << 20), "rows and fixed state add well under 1 MiB")
    }

    func testBaselineJPEGAndPNGEstimatesAreAFewRows() throws {
        let pixels = Fixtures.gradient(width: 640, height: 480, channels: 3)
        let baseline = try Fixtures.jpeg(pixels, width: 640, height: 480)
        XCTAssertLessThan(try decoder(for: baseline, .jpeg).decodeMemory, 512 << 10)
        let png = try Fixtures.png(pixels, width: 640, height: 480, options: Fixtures.pngOptions(colorType: 2, bitDepth: 8, interlaced: true))
        XCTAssertLessThan(try decoder(for: png, .png).decodeMemory, 512 << 10)
    }

    // MARK: - Admission

    func testEstimatesUpToTheExemptionNeverWait() {
        let budget = DecodeMemoryBudget(limit: 10, exempt: 100)
        assertTwoReservationsRunTogether(budget, bytes: 100, heldBytes: 0, "exempt decodes are not counted")
    }

    func testTwoLargeDecodesThatExceedTheLimitTogetherRunOneAfterTheOther() {
        let budget = DecodeMemoryBudget(limit: 100, exempt: 10)
        let firstInside = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let secondInside = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            budget.withReservation(60) {
                firstInside.signal()
                releaseFirst.wait()
            }
        }
        firstInside.wait()
        Thread.detachNewThread {
            budget.withReservation(60) { _ = secondInside.signal() }
        }
        XCTAssertEqual(secondInside.wait(timeout: .now() + 0.3), .timedOut,
                       "the second large decode started while the first held 60 of 100 bytes")
        XCTAssertEqual(budget.heldBytes, 60)
        releaseFirst.signal()
        XCTAssertEqual(secondInside.wait(timeout: .now() + 5), .success)
    }

    func testLargeDecodesThatFitTogetherRunTogether() {
        let budget = DecodeMemoryBudget(limit: 100, exempt: 10)
        assertTwoReservationsRunTogether(budget, bytes: 50, heldBytes: 100)
    }

    /// Two threads reserve `bytes` each and must both be inside at once, with `heldBytes` counted.
    private func assertTwoReservationsRunTogether(_ budget: DecodeMemoryBudget, bytes: Int, heldBytes: Int,
                                                  _ message: String = "", line: UInt = #line) {
        let inside = expectation(description: "both ran at once")
        inside.expectedFulfillmentCount = 2
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread.detachNewThread {
                budget.withReservation(bytes) {
                    inside.fulfill()
                    release.wait()
                }
            }
        }
        wait(for: [inside], timeout: 5)
        XCTAssertEqual(budget.heldBytes, heldBytes, message, line: line)
        release.signal()
        release.signal()
    }

    func testADecodeLargerThanTheWholeLimitRunsAlone() throws {
        let budget = DecodeMemoryBudget(limit: 100, exempt: 10)
        let ran = try budget.withReservation(500) { () throws -> Bool in
            XCTAssertEqual(budget.heldBytes, 500)
            return true
        }
        XCTAssertTrue(ran)
        XCTAssertEqual(budget.heldBytes, 0, "released after the body returned")
    }

    func testAThrowingDecodeReleasesItsReservation() {
        let budget = DecodeMemoryBudget(limit: 100, exempt: 10)
        XCTAssertThrowsError(try budget.withReservation(60) { () throws(DownloadError) in
            throw DownloadError(.notAnImage, "invalid JPEG")
        })
        XCTAssertEqual(budget.heldBytes, 0)
    }
}
