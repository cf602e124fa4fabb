import Foundation
import XCTest

/// A real browser renders a real run's gallery from `file://`: headless Chromium
/// (`Scripts/install-deps --with-browser`; skipped without it) takes a screenshot through
/// `Scripts/test-support/browser-screenshot`, with no network but loopback, and the picture must show the
/// thumbnails: a page whose relative links were broken renders its frame and text only.
final class GalleryScreenshotTests: EndToEndTestCase {
    /// Whether `chromium` is on the PATH.
    private var chromiumInstalled: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/chromium") }
    }

    /// Runs `Scripts/test-support/browser-screenshot PAGE OUT WIDTH,HEIGHT`.
    private func screenshot(_ page: String, to out: URL, width: Int, height: Int) throws -> Execution {
        try ImgFetchRunner.run([page, out.path, "\(width),\(height)"],
                               executable: TestServer.packageRoot.appendingPathComponent("Scripts/test-support/browser-screenshot"))
    }

    func testChromiumRendersTheGalleryWithItsThumbnails() throws {
        guard chromiumInstalled else {
            throw XCTSkip("chromium is not installed; run Scripts/install-deps --with-browser to run this test")
        }
        // Ten more failures: the first screen must still show thumbnails.
        let missing = (1...10).map { server.url("/status/404") + "?\($0)" }
        let run = try runWithGallery(try galleryList() + missing)
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let shot = scratch.file("gallery.png")
        let taken = try screenshot(pagePath, to: shot, width: 1200, height: 900)
        XCTAssertEqual(taken.exitCode, 0, taken.stderr)
        let image = try XCTUnwrap(NetpbmImage.reference("pngtopam", [], file: shot), "the screenshot is not a PNG")
        XCTAssertEqual([image.width, image.height], [1200, 900])

        let pixels = [UInt8](image.rgb.pixels)
        var colors = Set<Int>()
        var saturated = 0
        var sum = 0.0, squares = 0.0
        for offset in stride(from: 0, to: pixels.count, by: 3) {
            let (r, g, b) = (Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2]))
            colors.insert(r << 16 | g << 8 | b)
            if max(r, g, b) - min(r, g, b) > 100 { saturated += 1 }
            let luminance = Double(r + g + b) / 3
            sum += luminance
            squares += luminance * luminance
        }
        let count = Double(pixels.count / 3)
        let deviation = (squares / count - (sum / count) * (sum / count)).squareRoot()
        // Measured: about 43,000 colors and 12 % saturated pixels with the thumbnails; the same page
        // without them, about 1,000 colors and 0.07 %.
        XCTAssertGreaterThan(deviation, 10, "the screenshot is blank")
        XCTAssertGreaterThan(colors.count, 5000, "too few colors: the thumbnails did not render")
        XCTAssertGreaterThan(Double(saturated) / count, 0.03, "too little color: the thumbnails did not render")
    }
}
