import Glibc
import XCTest
@testable import ImgFetchCore

final class StagedFileTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("staged-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func contents(_ name: String) -> String? {
        FileManager.default.contents(atPath: directory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }

    func testAHiddenTempFileReplacesTheFinalFileOnlyWhenCommitted() throws {
        try "old\n".write(toFile: directory + "/shard.tar", atomically: false, encoding: .utf8)
        let file = try StagedFile(directory + "/shard.tar", tempName: .hidden)
        XCTAssertEqual(file.tempPath, directory + "/.imgfetch-" + TempFile.processTag + "-shard.tar")
        try file.write("new ")
        try file.write("content\n")
        XCTAssertEqual(contents("shard.tar"), "old\n", "the final file is untouched until the commit")
        try file.commit()
        XCTAssertEqual(contents("shard.tar"), "new content\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["shard.tar"])
        XCTAssertThrowsError(try file.commit(), "a second commit")
    }

    func testAPartFileIsTruncatedAndCanBeKeptForTheUser() throws {
        try "an earlier run's lines\n".write(toFile: directory + "/run.jsonl.part", atomically: false, encoding: .utf8)
        let file = try StagedFile(directory + "/run.jsonl", tempName: .part)
        XCTAssertEqual(file.tempPath, directory + "/run.jsonl.part")
        try file.write("{}\n")
        file.keepPart()
        XCTAssertEqual(contents("run.jsonl.part"), "{}\n")
        XCTAssertNil(contents("run.jsonl"))
    }

    func testADiscardedFileLeavesNothing() throws {
        let file = try StagedFile(directory + "/page.html", tempName: .part)
        try file.write("<html>")
        file.discard()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
        XCTAssertThrowsError(try file.write("more"), "a write after the file was closed fails")
    }

    func testAFileThatCannotBeCreatedSaysWhereAndWhy() {
        XCTAssertThrowsError(try StagedFile(directory + "/missing/shard.tar", tempName: .hidden)) { error in
            let failure = error as? StagedFile.OpenError
            XCTAssertEqual(failure?.code, ENOENT)
            XCTAssertEqual(failure?.downloadError.kind, .filesystem)
            XCTAssertTrue(failure?.downloadError.message.hasPrefix("cannot write \(self.directory!)/missing/.imgfetch-") == true)
        }
    }
}
