import Glibc
import XCTest
@testable import ImgFetchCore

/// What placing a temp file promises, for both kinds (see `TempFileTestCase`): a final path holds
/// nothing or the whole body, existing files follow the overwrite policy, symlinks are never
/// written through, failures leave nothing behind, and one body can be placed under several names.
final class TempFileTests: TempFileTestCase {
    // MARK: - Creation

    func testFilesAreOfTheKindUnderTest() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertEqual(folder.kind, kind)
            XCTAssertEqual(temp.path == nil, kind == .unnamed)
        }
    }

    func testTheDirectoryDecidesAtTheFirstFileWhenNotForced() throws {
        let undecided = TempFileDirectory(path: scratch.path)
        XCTAssertNil(undecided.kind)
        _ = try undecided.create()
        XCTAssertEqual(undecided.kind, .unnamed, "ext4 and tmpfs with /proc take unnamed files")
    }

    func testANewFileIsEmpty() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertEqual(bytesOnDisk(temp), [])
        }
    }

    func testModeRespectsUmask022() throws {
        try forEachKind {
            let old = umask(0o022)
            defer { umask(old) }
            try place("body", at: "a.jpg")
            XCTAssertEqual(mode(directory + "/a.jpg"), 0o644)
        }
    }

    func testModeRespectsUmask077() throws {
        try forEachKind {
            let old = umask(0o077)
            defer { umask(old) }
            try place("body", at: "a.jpg")
            XCTAssertEqual(mode(directory + "/a.jpg"), 0o600)
        }
    }

    func testCreateInMissingDirectoryThrowsFilesystemError() throws {
        try forEachKind {
            let missing = TempFileDirectory(path: directory + "/missing", kind: kind)
            XCTAssertThrowsError(try missing.create()) { error in
                XCTAssertEqual((error as? DownloadError)?.kind, .filesystem)
                XCTAssertTrue((error as? DownloadError)?.message.contains(self.directory + "/missing") ?? false)
            }
        }
    }

    // MARK: - Lifetime

    func testNothingAppearsAtAFinalPathBeforeTheBodyIsPlaced() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertNil(write(Fixtures.noise(count: TempFile.memoryLimit + 10_000), to: temp), "streams to the file")
            temp.finishWriting()
            XCTAssertEqual(finalFiles(), [], "a partial body is never at a final path")
            XCTAssertEqual(entries().count, kind == .named ? 1 : 0, "only a named file has a name of its own")
        }
    }

    func testAFileNeverPlacedLeavesNothingBehind() throws {
        try forEachKind {
            do {
                let temp = try folder.create()
                XCTAssertNil(write(Fixtures.noise(count: TempFile.memoryLimit + 10_000), to: temp))
                XCTAssertEqual(openFiles().count, 1)
            }
            XCTAssertEqual(entries(), [])
            XCTAssertEqual(openFiles(), [], "the descriptor is closed, and an unnamed file is freed with it")
        }
    }

    func testWriteAndTruncate() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertNil(write(Array("first attempt".utf8), to: temp))
            temp.truncate()
            XCTAssertNil(write(Array("body".utf8), to: temp))
            temp.finishWriting()
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), Array("body".utf8))
        }
    }

    // MARK: - Commit

    func testCommitMovesTheFileIntoPlace() throws {
        try forEachKind {
            XCTAssertEqual(try place("image bytes", at: "cat.jpg"), .saved)
            XCTAssertEqual(contents("cat.jpg"), "image bytes")
            XCTAssertEqual(entries(), ["cat.jpg"])
            XCTAssertEqual(openFiles(), [])
        }
    }

    func testAStreamedBodyIsPlacedWhole() throws {
        try forEachKind {
            let body = Fixtures.noise(count: TempFile.memoryLimit * 3 + 17)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp))
            temp.finishWriting()
            XCTAssertEqual(try temp.commit(to: directory + "/big.jpg", overwrite: false), .saved)
            XCTAssertEqual(bytes(of: "big.jpg"), body)
            XCTAssertEqual(entries(), ["big.jpg"])
        }
    }

    func testCommitWithoutOverwriteLeavesAnExistingFileUntouched() throws {
        try forEachKind {
            try createFile("cat.jpg", "old bytes")
            let temp = try folder.create()
            XCTAssertNil(write(Array("new bytes".utf8), to: temp))
            XCTAssertEqual(try temp.commit(to: directory + "/cat.jpg", overwrite: false), .existed)
            XCTAssertEqual(contents("cat.jpg"), "old bytes")
            withExtendedLifetime(temp) {
                // TempFile.Commit.existed is documented as "the temp file was removed".
                XCTAssertEqual(entries(), ["cat.jpg"], "temp file still present after commit returned .existed")
            }
        }
    }

    func testCommitWithOverwriteReplacesAnExistingFile() throws {
        try forEachKind {
            try createFile("cat.jpg", "old bytes")
            XCTAssertEqual(try place("new bytes", at: "cat.jpg", overwrite: true), .saved)
            XCTAssertEqual(contents("cat.jpg"), "new bytes")
            XCTAssertEqual(entries(), ["cat.jpg"], "no side name is left behind")
        }
    }

    func testOverwriteOfAMissingFileCreatesIt() throws {
        try forEachKind {
            XCTAssertEqual(try place("body", at: "new.jpg", overwrite: true), .saved)
            XCTAssertEqual(contents("new.jpg"), "body")
            XCTAssertEqual(entries(), ["new.jpg"])
        }
    }

    func testSymlinkAtFinalPathIsNotFollowedWithoutOverwrite() throws {
        try forEachKind {
            try createFile("victim", "secret")
            XCTAssertEqual(symlink(directory + "/victim", directory + "/cat.jpg"), 0)
            XCTAssertEqual(try place("attacker-controlled", at: "cat.jpg"), .existed)
            XCTAssertTrue(isSymlink(directory + "/cat.jpg"), "the planted link was replaced")
            XCTAssertEqual(contents("victim"), "secret")
        }
    }

    /// A directory at the name is no file to keep: the item fails (class filesystem), not "skipped".
    func testADirectoryInTheWayFailsTheItem() throws {
        try forEachKind {
            XCTAssertEqual(mkdir(directory + "/cat.jpg", 0o755), 0)
            defer { rmdir(directory + "/cat.jpg") }
            XCTAssertThrowsError(try place("body", at: "cat.jpg")) { error in
                XCTAssertEqual(error as? DownloadError,
                               DownloadError(.filesystem, "cannot write \(directory)/cat.jpg: a directory is in the way"))
            }
        }
    }

    func testDanglingSymlinkAtFinalPathIsNotFollowed() throws {
        try forEachKind {
            let target = directory + "/created-through-link"
            XCTAssertEqual(symlink(target, directory + "/cat.jpg"), 0)
            XCTAssertEqual(try place("body", at: "cat.jpg"), .existed)
            XCTAssertTrue(isSymlink(directory + "/cat.jpg"))
            XCTAssertFalse(exists(target), "commit wrote through a dangling symlink")
        }
    }

    func testOverwriteReplacesASymlinkInsteadOfWritingThroughIt() throws {
        try forEachKind {
            try createFile("victim", "secret")
            XCTAssertEqual(symlink(directory + "/victim", directory + "/cat.jpg"), 0)
            XCTAssertEqual(try place("body", at: "cat.jpg", overwrite: true), .saved)
            XCTAssertFalse(isSymlink(directory + "/cat.jpg"))
            XCTAssertEqual(contents("cat.jpg"), "body")
            XCTAssertEqual(contents("victim"), "secret")
        }
    }

    func testCommitIntoMissingDirectoryThrowsAndLeavesNothing() throws {
        try forEachKind {
            for overwrite in [false, true] {
                let temp = try folder.create()
                XCTAssertNil(write(Array("body".utf8), to: temp))
                XCTAssertThrowsError(try temp.commit(to: directory + "/missing/cat.jpg", overwrite: overwrite)) { error in
                    XCTAssertEqual((error as? DownloadError)?.kind, .filesystem)
                }
            }
            XCTAssertEqual(entries(), [])
            XCTAssertEqual(openFiles(), [])
        }
    }

    func testAFailedOverwriteRemovesItsSideName() throws {
        try forEachKind {
            // rename() cannot replace a non-empty directory: the side name it linked must go.
            try FileManager.default.createDirectory(atPath: directory + "/cat.jpg/inside", withIntermediateDirectories: true)
            XCTAssertThrowsError(try place("body", at: "cat.jpg", overwrite: true))
            XCTAssertEqual(entries(), ["cat.jpg"])
            XCTAssertEqual(openFiles(), [])
        }
    }

    // MARK: - One body, several names

    func testCopiesForMoreNamesAreCompleteAndIndependent() throws {
        try forEachKind {
            for (size, tag) in [(1000, "held"), (TempFile.memoryLimit * 2 + 5, "streamed")] {
                let body = Fixtures.noise(count: size)
                let temp = try folder.create()
                XCTAssertNil(write(body, to: temp))
                temp.finishWriting()
                XCTAssertEqual(try temp.place(at: directory + "/\(tag)-a.jpg", overwrite: false), .saved)
                XCTAssertEqual(try temp.copy(in: folder).commit(to: directory + "/\(tag)-b.jpg", overwrite: false), .saved)
                try createFile("\(tag)-c.jpg", "old")
                XCTAssertEqual(try temp.copy(in: folder).commit(to: directory + "/\(tag)-c.jpg", overwrite: true), .saved)
                for name in ["a", "b", "c"] { XCTAssertEqual(bytes(of: "\(tag)-\(name).jpg"), body, "\(tag) \(name)") }
                XCTAssertEqual(Set(["a", "b", "c"].compactMap { inode(of: "\(tag)-\($0).jpg") }).count, 3, "copies, not links")
            }
            XCTAssertEqual(finalFiles().count, 6)
            XCTAssertEqual(entries(), finalFiles(), "no temp file is left once all are released")
        }
    }

    func testANameThatExistedLeavesTheBodyForTheNextName() throws {
        try forEachKind {
            try createFile("taken.jpg", "old")
            let temp = try folder.create()
            XCTAssertNil(write(Array("body".utf8), to: temp))
            XCTAssertEqual(try temp.place(at: directory + "/taken.jpg", overwrite: false), .existed)
            XCTAssertEqual(try temp.commit(to: directory + "/free.jpg", overwrite: false), .saved)
            XCTAssertEqual(contents("taken.jpg"), "old")
            XCTAssertEqual(contents("free.jpg"), "body")
            XCTAssertEqual(entries(), ["free.jpg", "taken.jpg"])
        }
    }

    func testACopyOfAFileOnDiskServesAnotherName() throws {
        try forEachKind {
            try createFile("source.jpg", "indexed body")
            XCTAssertEqual(try folder.copy(of: directory + "/source.jpg").commit(to: directory + "/other.jpg", overwrite: false), .saved)
            XCTAssertEqual(contents("other.jpg"), "indexed body")
            XCTAssertThrowsError(try folder.copy(of: directory + "/absent.jpg"))
            XCTAssertEqual(entries(), ["other.jpg", "source.jpg"])
        }
    }

    // MARK: - A full disk

    func testAFullDiskFailsTheBodyAndFreesItsSpace() throws {
        try forEachKind {
            let tiny = try TinyFileSystem(at: directory + "/tiny", bytes: 64 << 10)
            defer { tiny.unmount() }
            let full = TempFileDirectory(path: tiny.path, kind: kind)
            do {
                // Streamed: the write itself fails.
                let streamed = try full.create()
                XCTAssertEqual(write(Fixtures.noise(count: 200_000), to: streamed), ENOSPC)
                // Held in memory: writing it out (placing it) fails, and nothing is placed.
                let held = try full.create()
                XCTAssertNil(write(Fixtures.noise(count: 100_000), to: held))
                XCTAssertThrowsError(try held.commit(to: tiny.path + "/held.jpg", overwrite: false)) { error in
                    XCTAssertTrue((error as? DownloadError)?.message.contains("No space left on device") ?? false, "\(error)")
                }
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tiny.path), [], "nothing at a final path, no temp file")
            let next = try full.create()
            XCTAssertNil(write(Fixtures.noise(count: 40_000), to: next))
            XCTAssertEqual(try next.commit(to: tiny.path + "/next.jpg", overwrite: false), .saved, "the failed bodies' space is free again")
        }
    }

    // MARK: - Helpers

    @discardableResult
    private func place(_ text: String, at name: String, overwrite: Bool = false) throws -> TempFile.Commit {
        let temp = try folder.create()
        XCTAssertNil(write(Array(text.utf8), to: temp))
        return try temp.commit(to: directory + "/" + name, overwrite: overwrite)
    }

    private func createFile(_ name: String, _ text: String) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(text.utf8)))
    }

    private func bytes(of name: String) -> [UInt8]? { bytes(atPath: directory + "/" + name) }

    private func contents(_ name: String) -> String? { bytes(of: name).map { String(decoding: $0, as: UTF8.self) } }

    /// The finished files (names not starting with a dot).
    private func finalFiles() -> [String] { entries().filter { !$0.hasPrefix(".") } }

    private func inode(of name: String) -> ino_t? {
        var info = stat()
        return stat(directory + "/" + name, &info) == 0 ? info.st_ino : nil
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        return info.st_mode & 0o7777
    }
}
