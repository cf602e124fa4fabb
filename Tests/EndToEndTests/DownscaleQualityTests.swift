import Foundation
import XCTest

/// Shrinking is at least as good as img2dataset's: 20 JPEG sources, 1.5 to 8 times the target,
/// shrunk to 256 px by imgfetch (the JPEG decoder's DCT scaling, then the box filter) and by
/// OpenCV's INTER_AREA (img2dataset's downscale_interpolation), each measured by PSNR against
/// Pillow's LANCZOS shrink of the same source (`Scripts/test-support/downscale_quality.py`).
final class DownscaleQualityTests: EndToEndTestCase {
    func testShrinkingMatchesOrBeatsOpenCVsInterArea() throws {
        let python = TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python")
        let script = TestServer.packageRoot.appendingPathComponent("Scripts/test-support/downscale_quality.py").path
        let made = try ImgFetchRunner.run([script, "make", server.root.path], executable: python)
        XCTAssertEqual(made.exitCode, 0, made.stderr)
        let names = (0..<20).map { String(format: "src-%02d", $0) }
        let list = try scratch.write("sources.txt", names.map { server.url("/files/\($0).jpg") }.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--save-as", "png", "--resize", "256", "-q"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let measured = try ImgFetchRunner.run([script, "measure", server.root.path, outputDirectory], executable: python)
        XCTAssertEqual(measured.exitCode, 0, measured.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(measured.stdout.utf8)) as? [String: Any])
        let sources = try XCTUnwrap(report["sources"] as? [[String: Any]])
        XCTAssertEqual(sources.count, 20)
        let median = try XCTUnwrap(report["median_gap_db"] as? Double)
        let worst = try XCTUnwrap(report["worst_gap_db"] as? Double)
        XCTAssertLessThanOrEqual(median, 0.1, "median dB behind INTER_AREA: \(measured.stdout)")
        XCTAssertLessThanOrEqual(worst, 0.5, "worst dB behind INTER_AREA: \(measured.stdout)")
    }
}
