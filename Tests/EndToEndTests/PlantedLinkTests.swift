import Foundation
import XCTest

/// A symbolic link planted where imgfetch keeps its own files (`DIR/.imgfetch`, its index or its
/// run lock) is refused, not followed: nothing is created where it points, and no request is made.
final class PlantedLinkTests: EndToEndTestCase {
    private func assertRefused(_ link: String, pointingTo target: String, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try addJPEG("a.jpg")
        let run = try fetch([server.url("/files/a.jpg")])
        XCTAssertEqual(run.exitCode, 2, run.stderr, file: file, line: line)
        XCTAssertTrue(run.stderr.contains("imgfetch: \(link) is a symbolic link (to \(target)): imgfetch keeps its index and lock "
                                          + "only in a real file and folder there"), run.stderr, file: file, line: line)
        XCTAssertEqual(try server.requests().count, 0, file: file, line: line)
    }

    func testALinkedCacheFolderIsRefused() throws {
        let elsewhere = scratch.file("elsewhere").path
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: outputDirectory + "/.imgfetch", withDestinationPath: elsewhere)
        try assertRefused(outputDirectory + "/.imgfetch", pointingTo: elsewhere)
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere), "the dangling link's target was created")
    }

    func testALinkedIndexIsNotFollowedAndNothingIsCreatedWhereItPoints() throws {
        let elsewhere = scratch.file("elsewhere.sqlite").path
        try FileManager.default.createDirectory(atPath: outputDirectory + "/.imgfetch", withIntermediateDirectories: true)
        let link = outputDirectory + "/.imgfetch/index.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
        _ = try addJPEG("a.jpg")
        // As with any index that cannot be opened: one warning, and the run goes on without the cache.
        let run = try fetch([server.url("/files/a.jpg")])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("imgfetch: warning: \(link) is a symbolic link (to \(elsewhere)): imgfetch keeps its index "
                                          + "and lock only in a real file and folder there"), run.stderr)
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere + suffix), "created \(elsewhere + suffix)")
        }
    }

    func testALinkedRunLockIsRefused() throws {
        let elsewhere = scratch.file("lock-elsewhere").path
        try FileManager.default.createDirectory(atPath: outputDirectory + "/.imgfetch", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: outputDirectory + "/.imgfetch/run.lock", withDestinationPath: elsewhere)
        try assertRefused(outputDirectory + "/.imgfetch/run.lock", pointingTo: elsewhere)
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere))
    }
}
