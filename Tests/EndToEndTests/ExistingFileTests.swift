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

    /// Two URLs whose names collide get `img.jpg` and a side name; a later run of the second alone
    /// keeps the second's own file, not the first's under the shared name.
    func testARerunOfTheSecondOfTwoCollidingURLsKeepsItsOwnFile() throws {
        let first = try addJPEG("img.jpg")
        let second = Data(try server.fileData(try server.addSamples(count: 1, seed: 9).first { $0.hasSuffix(".jpg") }!))
        try FileManager.default.createDirectory(at: server.root.appendingPathComponent("b"), withIntermediateDirectories: true)
        try second.write(to: server.root.appendingPathComponent("b/img.jpg"))
        let (a, b) = (server.url("/files/img.jpg"), server.url("/files/b/img.jpg"))
        let both = try fetch([a, b])
        XCTAssertEqual(both.exitCode, 0, both.stderr)
        let sideName = try XCTUnwrap(both.result(for: b)?[2])
        XCTAssertNotEqual(sideName, outputDirectory + "/img.jpg")
        let again = try fetch([b])
        XCTAssertEqual(again.exitCode, 0, again.stderr)
        XCTAssertEqual(again.result(for: b), ["skipped", b, sideName])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: sideName)), second)
        XCTAssertEqual(try outputData("img.jpg"), first)
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

    func testSecondRunKeepsEveryFileAndOnlyRevalidates() throws {
        let names = try server.addSamples(count: 3)
        // Modified "tomorrow": no heuristic freshness, whatever the time between the two runs.
        for name in names { try server.setModificationDate(of: name, daysAgo: -1) }
        let urls = names.map { server.url("/files/\($0)") }
        XCTAssertEqual(try fetch(urls).exitCode, 0)
        let second = try fetch(urls)
        XCTAssertEqual(second.exitCode, 0)
        XCTAssertTrue(second.results.allSatisfy { $0[0] == "skipped" }, second.stdout)
        // Each is revalidated once, and the server answers 304.
        let again = try server.requests(to: "/files/").dropFirst(names.count)
        XCTAssertEqual(again.count, names.count)
        XCTAssertTrue(again.allSatisfy { $0.header("If-None-Match") != nil }, "\(again)")
    }

    func testOverwriteDoesNotApplyToFilesTheCacheIndexed() throws {
        _ = try addJPEG("a.jpg")
        let url = server.url("/header/Cache-Control/max-age%3D600/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let second = try fetch([url], ["--overwrite"])
        XCTAssertEqual(second.result(for: url)?[0], "skipped", "fresh in the index: the cache decides, not --overwrite")
        XCTAssertEqual(try server.requests(to: "/header/").count, 1)
    }
}
