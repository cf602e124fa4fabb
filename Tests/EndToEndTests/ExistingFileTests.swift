import Foundation
import XCTest

/// `--skip-existing` (default) and `--overwrite`.
final class ExistingFileTests: EndToEndTestCase {
    func testExistingFileIsSkippedWithoutARequest() throws {
        _ = try addJPEG("a.jpg")
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let old = Data("previous run".utf8)
        try old.write(to: URL(fileURLWithPath: outputDirectory).appendingPathComponent("a.jpg"))
        let url = server.url("/files/a.jpg")

        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.result(for: url), ["skipped", url, outputDirectory + "/a.jpg"])
        XCTAssertEqual(try outputData("a.jpg"), old)
        XCTAssertEqual(try server.requests(to: "/files/").count, 0)
    }

    func testOverwriteReplacesTheFile() throws {
        let data = try addJPEG("a.jpg")
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        try Data("previous run".utf8).write(to: URL(fileURLWithPath: outputDirectory).appendingPathComponent("a.jpg"))
        let url = server.url("/files/a.jpg")

        let result = try fetch([url], ["--overwrite"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.result(for: url)?[0], "saved")
        XCTAssertEqual(try outputData("a.jpg"), data)
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
    }

    func testSecondRunSkipsEverything() throws {
        let names = try server.addSamples(count: 3)
        let urls = names.map { server.url("/files/\($0)") }
        XCTAssertEqual(try fetch(urls).exitCode, 0)
        let second = try fetch(urls)
        XCTAssertEqual(second.exitCode, 0)
        XCTAssertTrue(second.results.allSatisfy { $0[0] == "skipped" }, second.stdout)
        XCTAssertEqual(try server.requests(to: "/files/").count, names.count)
    }
}
