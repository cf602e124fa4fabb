import Foundation
import XCTest
@testable import ImgFetchCLI

/// Links from the gallery page to the output directory, wherever either is.
final class RelativePathTests: XCTestCase {
    func testSegmentsOfAnAbsolutePathAreNormalized() {
        XCTAssertEqual(RelativePath.segments(ofAbsolute: "/a/b/c"), ["a", "b", "c"])
        XCTAssertEqual(RelativePath.segments(ofAbsolute: "//a///b/"), ["a", "b"])
        XCTAssertEqual(RelativePath.segments(ofAbsolute: "/a/./b/../c"), ["a", "c"])
        XCTAssertEqual(RelativePath.segments(ofAbsolute: "/../../a"), ["a"], "never above the root")
        XCTAssertEqual(RelativePath.segments(ofAbsolute: "/"), [])
    }

    func testSameDirectory() {
        XCTAssertEqual(RelativePath.segments(from: "/w/pics", to: "/w/pics/cat.jpg"), ["cat.jpg"])
        XCTAssertEqual(RelativePath.segments(from: "/w/pics", to: "/w/pics"), [])
    }

    func testPageBesideTheOutputDirectory() {
        // --gallery report.html -o pics
        XCTAssertEqual(RelativePath.segments(from: "/w", to: "/w/pics/cat.jpg"), ["pics", "cat.jpg"])
        XCTAssertEqual(RelativePath.segments(from: "/w", to: "/w/pics/.imgfetch/thumbs/ab.png"), ["pics", ".imgfetch", "thumbs", "ab.png"])
    }

    func testPageElsewhere() {
        XCTAssertEqual(RelativePath.segments(from: "/tmp/reports", to: "/home/u/pics/a.png"), ["..", "..", "home", "u", "pics", "a.png"])
        XCTAssertEqual(RelativePath.segments(from: "/w/pics/sub", to: "/w/pics/a.png"), ["..", "a.png"])
        XCTAssertEqual(RelativePath.segments(from: "/", to: "/pics/a.png"), ["pics", "a.png"])
        XCTAssertEqual(RelativePath.segments(from: "/a/b/c", to: "/"), ["..", "..", ".."])
    }

    func testCommonPrefixIsBySegmentNotByCharacter() {
        XCTAssertEqual(RelativePath.segments(from: "/w/pic", to: "/w/pics/a.png"), ["..", "pics", "a.png"])
        XCTAssertEqual(RelativePath.segments(from: "/w/pics2", to: "/w/pics/a.png"), ["..", "pics", "a.png"])
    }

    func testDirectoryOfAPath() {
        XCTAssertEqual(RelativePath.directory(of: "report.html"), ".")
        XCTAssertEqual(RelativePath.directory(of: "out/report.html"), "out")
        XCTAssertEqual(RelativePath.directory(of: "/report.html"), "/")
        XCTAssertEqual(RelativePath.directory(of: "/a/b/report.html"), "/a/b")
        XCTAssertEqual(RelativePath.directory(of: "a/b/"), "a")
    }

    func testResolvedDirectoriesFollowSymlinks() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-relpath-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let real = root.appendingPathComponent("real/pics")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link").path,
                                                   withDestinationPath: root.appendingPathComponent("real").path)
        let resolved = try RelativePath.resolvedDirectory(root.appendingPathComponent("link/pics").path).get()
        XCTAssertEqual(resolved, try RelativePath.resolvedDirectory(real.path).get())
        XCTAssertTrue(resolved.hasPrefix("/"))
        XCTAssertFalse(resolved.contains("/link/"))
        XCTAssertThrowsError(try RelativePath.resolvedDirectory(root.appendingPathComponent("missing").path).get())
    }
}
