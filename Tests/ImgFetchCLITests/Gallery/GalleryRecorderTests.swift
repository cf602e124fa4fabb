import Foundation
import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The page a run's items make, written into real directories with real images.
final class GalleryRecorderTests: XCTestCase {
    private var root: URL!
    private var output: String { root.appendingPathComponent("out").path }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-gallery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: root.appendingPathComponent("out").path, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.appendingPathComponent("reports").path, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: root)
    }

    /// A `width` × `height` RGB PNG in the output directory, made by netpbm's `pnmtopng`.
    private func addPNG(_ name: String, width: Int, height: Int) throws {
        var ppm = Data("P6\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height {
            for x in 0..<width { ppm += [UInt8(x * 255 / width), UInt8(y * 255 / height), 128] }
        }
        let source = root.appendingPathComponent("source.ppm")
        try ppm.write(to: source)
        let target = URL(fileURLWithPath: output + "/" + name)
        try Data().write(to: target)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pnmtopng", source.path]
        process.standardOutput = try FileHandle(forWritingTo: target)
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    private func saved(_ name: String, format: ImageFormat = .png, width: Int, height: Int, line: Int) -> ItemReport {
        var result = DownloadResult(status: .saved, paths: [output + "/" + name])
        result.format = format
        if format.isDecodable { result.image = ImageInfo(width: width, height: height, channels: 3, bitDepth: 8, verified: true) }
        return ItemReport(position: ListPosition(listName: "urls.txt", line: line), displayURL: "http://example.com/\(name)", result: result)
    }

    private func failed(_ kind: DownloadError.Kind, _ message: String, line: Int) -> ItemReport {
        ItemReport(position: ListPosition(listName: "urls.txt", line: line), displayURL: "http://example.com/\(line)",
                   result: .failed(DownloadError(kind, message), attempts: 1))
    }

    private func page(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    func testPageInAnotherDirectoryLinksBackToImagesAndThumbnails() throws {
        try addPNG("wide.png", width: 512, height: 128)
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8).write(to: URL(fileURLWithPath: output + "/logo.svg"))
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]).write(to: URL(fileURLWithPath: output + "/broken.jpg"))
        let path = root.appendingPathComponent("reports/run.html").path
        let recorder = try GalleryRecorder(path: path, outputDirectory: output, limits: DecodeLimits())
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".part"), "the page's file is opened before the run")
        recorder.record(saved("wide.png", width: 512, height: 128, line: 1))
        recorder.record(saved("logo.svg", format: .svg, width: 0, height: 0, line: 2))
        recorder.record(saved("broken.jpg", format: .jpeg, width: 10, height: 10, line: 3))
        recorder.record(failed(.http, "HTTP 404", line: 4))
        recorder.record(failed(.dns, "could not resolve", line: 5))
        recorder.record(failed(.http, "HTTP 500 <b>oops</b>", line: 6))
        var summary = RunSummary()
        summary.saved = 3
        summary.failed = 3
        XCTAssertNil(recorder.finish(summary: summary))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".part"))
        let html = try page(path)

        let thumbs = try FileManager.default.contentsOfDirectory(atPath: output + "/.imgfetch/thumbs")
        XCTAssertEqual(thumbs.count, 1, "one thumbnail: the SVG and the broken JPEG get placeholders")
        XCTAssertTrue(html.contains("<img src=\"../out/.imgfetch/thumbs/\(thumbs[0])\" width=\"256\" height=\"64\" loading=\"lazy\""), html)
        XCTAssertTrue(html.contains("href=\"../out/wide.png\""))
        XCTAssertTrue(html.contains("<a class=\"frame ph\" href=\"../out/logo.svg\" title=\"no preview: imgfetch cannot decode SVG\"><b>SVG</b>"))
        XCTAssertTrue(html.contains("<a class=\"frame ph\" href=\"../out/broken.jpg\""), "a thumbnail that fails shows a placeholder")
        XCTAssertTrue(html.contains("<span class=\"meta\">512 × 128 · "))
        // Failures: the most frequent class first, entries in the order they came, text escaped.
        let http = try XCTUnwrap(html.range(of: "data-class=\"http\""))
        let dns = try XCTUnwrap(html.range(of: "data-class=\"dns\""))
        XCTAssertLessThan(http.lowerBound, dns.lowerBound)
        XCTAssertTrue(html.contains("<summary>http <span class=\"n\">(2)</span></summary>"))
        XCTAssertLessThan(try XCTUnwrap(html.range(of: "HTTP 404")).lowerBound, try XCTUnwrap(html.range(of: "HTTP 500")).lowerBound)
        XCTAssertTrue(html.contains("HTTP 500 &lt;b&gt;oops&lt;/b&gt;"))
        XCTAssertTrue(html.contains("<span class=\"where\">urls.txt:6</span>"))
        XCTAssertTrue(html.contains(HTMLText.escape(summary.line)))
        XCTAssertTrue(html.hasSuffix("</html>\n"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: output + "/.imgfetch")
        XCTAssertEqual(leftovers, ["thumbs"], "the record files have no names")
    }

    func testPageInTheOutputDirectoryUsesPlainNames() throws {
        try addPNG("a b.png", width: 10, height: 10)
        let path = output + "/index.html"
        let recorder = try GalleryRecorder(path: path, outputDirectory: output, limits: DecodeLimits())
        recorder.record(saved("a b.png", width: 10, height: 10, line: 1))
        XCTAssertNil(recorder.finish(summary: RunSummary()))
        let html = try page(path)
        XCTAssertTrue(html.contains("href=\"a%20b.png\""))
        XCTAssertTrue(html.contains("src=\".imgfetch/thumbs/"))
        XCTAssertFalse(html.contains("id=\"failures\""), "no failures, no section")
    }

    func testManyFailuresAreCollapsedAndBlocksOfTilesAreSplit() throws {
        try addPNG("x.png", width: 4, height: 4)
        let path = root.appendingPathComponent("g.html").path
        let recorder = try GalleryRecorder(path: path, outputDirectory: output, limits: DecodeLimits())
        let tiles = GalleryPage.tilesPerBlock + 1
        for line in 1...tiles { recorder.record(saved("x.png", width: 4, height: 4, line: line)) }
        for line in 1...3 { recorder.record(failed(.timeout, "slow", line: line)) }
        XCTAssertNil(recorder.finish(summary: RunSummary(failed: 3)))
        let html = try page(path)
        XCTAssertEqual(html.components(separatedBy: "<figure class=\"tile\"").count - 1, tiles)
        XCTAssertEqual(html.components(separatedBy: "<div class=\"grid\">").count - 1, 2)
        XCTAssertEqual(html.components(separatedBy: " loading=\"lazy\"").count - 1, tiles)
        XCTAssertTrue(html.contains("data-class=\"timeout\"><summary>"), "failures are collapsed")
        // Images first: the first screen shows thumbnails however many items failed.
        let images = try XCTUnwrap(html.range(of: "id=\"images\"")), failures = try XCTUnwrap(html.range(of: "id=\"failures\""))
        XCTAssertLessThan(images.lowerBound, failures.lowerBound)
        XCTAssertTrue(html.contains("<a href=\"#failures\">3 failed</a>"))
    }

    func testAnUnwritablePageIsASetupErrorNamingThePath() throws {
        let path = root.appendingPathComponent("missing/dir/run.html").path
        XCTAssertThrowsError(try GalleryRecorder(path: path, outputDirectory: output, limits: DecodeLimits())) { error in
            XCTAssertEqual((error as? SetupError)?.message, "cannot write gallery '\(path)': No such file or directory")
        }
    }

    func testDiscardLeavesNothing() throws {
        let path = root.appendingPathComponent("run.html").path
        let recorder = try GalleryRecorder(path: path, outputDirectory: output, limits: DecodeLimits())
        recorder.discard()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".part"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertNil(recorder.finish(summary: RunSummary()))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }
}
