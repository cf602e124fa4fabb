import Foundation
import XCTest
@testable import ImgFetchCore

/// The one rule for a file already at a name, and the three sources an output comes from.
final class OutputPlacerTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch.path)
    }

    private func placer(_ policy: ExistingFilePolicy) -> OutputPlacer {
        OutputPlacer(directory: scratch.path, tempFiles: TempFileDirectory(path: scratch.path), existingFiles: policy)
    }

    private func write(_ name: String, _ text: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: scratch.file(name), contents: Data(text.utf8)))
    }

    private func text(_ name: String) -> String? {
        scratch.contents(of: name).map { String(decoding: $0, as: UTF8.self) }
    }

    func testAFileAtTheNameIsReplacedOnlyWithOverwriteOrWhenTheIndexGaveItThisURL() {
        XCTAssertFalse(placer(.skip).mayReplace("a.jpg", indexedNames: []))
        XCTAssertTrue(placer(.skip).mayReplace("a.jpg", indexedNames: ["a.jpg"]))
        XCTAssertFalse(placer(.skip).mayReplace("a.jpg", indexedNames: ["b.jpg"]))
        XCTAssertTrue(placer(.overwrite).mayReplace("a.jpg", indexedNames: []))
    }

    func testACopyOfAFileKeepsSomeoneElsesFileAndReplacesAnIndexedOne() throws {
        write("source.jpg", "new body")
        write("theirs.jpg", "someone else's")
        write("ours.jpg", "old body")
        let placer = placer(.skip)
        XCTAssertEqual(try placer.place(.file(at: scratch.file("source.jpg")), as: "theirs.jpg", indexedNames: []), .existed)
        XCTAssertEqual(text("theirs.jpg"), "someone else's")
        XCTAssertEqual(try placer.place(.file(at: scratch.file("source.jpg")), as: "ours.jpg", indexedNames: ["ours.jpg"]), .saved)
        XCTAssertEqual(text("ours.jpg"), "new body")
        XCTAssertEqual(try placer.place(.file(at: scratch.file("source.jpg")), as: "fresh.jpg", indexedNames: []), .saved)
        XCTAssertEqual(text("fresh.jpg"), "new body")
        XCTAssertEqual(scratch.tempFiles(), [])
        XCTAssertEqual(scratch.openFiles(), [], "every copy's temp file is released")
    }

    func testABodyBecomesItsFirstNameAndIsCopiedToTheOthers() throws {
        let placer = placer(.overwrite)
        let body = try TempFileDirectory(path: scratch.path).create()
        XCTAssertNil(Array("verified body".utf8).withUnsafeBytes { body.write($0) })
        write("second.jpg", "old")
        XCTAssertEqual(try placer.place(.body(body), as: "first.jpg", indexedNames: []), .saved)
        XCTAssertEqual(try placer.place(.copy(of: body), as: "second.jpg", indexedNames: []), .saved)
        XCTAssertEqual(text("first.jpg"), "verified body")
        XCTAssertEqual(text("second.jpg"), "verified body")
        XCTAssertNotEqual(scratch.inode(of: "first.jpg"), scratch.inode(of: "second.jpg"), "a copy, not a second link")
    }
}
