import Glibc
import XCTest
@testable import ImgFetchCore

final class TempFileTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var directory: String { scratch.path }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "imgfetch-tempfile")
    }

    override func tearDown() {
        scratch.remove()
    }

    // MARK: - Creation

    func testCreatesAHiddenPartFileInTheDirectory() throws {
        let temp = try TempFile.create(in: directory)
        let name = String(temp.path.split(separator: "/").last ?? "")
        XCTAssertEqual(temp.path, directory + "/" + name)
        XCTAssertTrue(name.hasPrefix(".imgfetch-"), name)
        XCTAssertTrue(name.hasSuffix(".part"), name)
        XCTAssertTrue(exists(temp.path))
        XCTAssertEqual(try entries(), [name])
    }

    func testDirectoryWithTrailingSlash() throws {
        let temp = try TempFile.create(in: directory + "/")
        XCTAssertFalse(temp.path.contains("//"), temp.path)
        XCTAssertTrue(exists(temp.path))
    }

    func testTwoTempFilesHaveDifferentNames() throws {
        let first = try TempFile.create(in: directory)
        let second = try TempFile.create(in: directory)
        XCTAssertNotEqual(first.path, second.path)
    }

    func testModeRespectsUmask022() throws {
        let old = umask(0o022)
        defer { umask(old) }
        let temp = try TempFile.create(in: directory)
        XCTAssertEqual(try mode(temp.path), 0o644)
    }

    func testModeRespectsUmask077() throws {
        let old = umask(0o077)
        defer { umask(old) }
        let temp = try TempFile.create(in: directory)
        XCTAssertEqual(try mode(temp.path), 0o600)
    }

    func testCreateInMissingDirectoryThrowsFilesystemError() {
        XCTAssertThrowsError(try TempFile.create(in: directory + "/missing")) { error in
            XCTAssertEqual((error as? DownloadError)?.kind, .filesystem)
            XCTAssertTrue((error as? DownloadError)?.message.contains(self.directory + "/missing") ?? false)
        }
    }

    // MARK: - Lifetime

    func testDeinitWithoutCommitRemovesTheFile() throws {
        var path = ""
        do {
            let temp = try TempFile.create(in: directory)
            path = temp.path
            try write("partial", to: temp)
            XCTAssertTrue(exists(path))
        }
        XCTAssertFalse(exists(path))
        XCTAssertEqual(try entries(), [])
    }

    func testWriteAndTruncate() throws {
        let temp = try TempFile.create(in: directory)
        try write("first attempt", to: temp)
        temp.truncate()
        try write("body", to: temp)
        temp.finishWriting()
        try temp.writeOut()
        XCTAssertEqual(try contents(temp.path), "body")
    }

    // MARK: - Commit

    func testCommitMovesTheFileIntoPlace() throws {
        let final = directory + "/cat.jpg"
        let temp = try TempFile.create(in: directory)
        try write("image bytes", to: temp)
        XCTAssertEqual(try commit(temp, to: final, overwrite: false), .saved)
        XCTAssertFalse(exists(temp.path))
        XCTAssertEqual(try contents(final), "image bytes")
        XCTAssertEqual(try entries(), ["cat.jpg"])
    }

    func testCommittedFileSurvivesDeinit() throws {
        let final = directory + "/cat.jpg"
        do {
            let temp = try TempFile.create(in: directory)
            try write("kept", to: temp)
            XCTAssertEqual(try commit(temp, to: final, overwrite: true), .saved)
        }
        XCTAssertEqual(try contents(final), "kept")
    }

    func testCommitWithoutOverwriteLeavesAnExistingFileUntouched() throws {
        let final = directory + "/cat.jpg"
        try createFile(final, "old bytes")
        let temp = try TempFile.create(in: directory)
        try write("new bytes", to: temp)
        let tempPath = temp.path

        XCTAssertEqual(try commit(temp, to: final, overwrite: false), .existed)
        XCTAssertEqual(try contents(final), "old bytes")
        withExtendedLifetime(temp) {
            // TempFile.Commit.existed is documented as "the temp file was removed".
            XCTAssertFalse(exists(tempPath), "temp file still present after commit returned .existed")
        }
    }

    func testTempFileIsGoneOnceAnExistedCommitIsReleased() throws {
        let final = directory + "/cat.jpg"
        try createFile(final, "old bytes")
        do {
            let temp = try TempFile.create(in: directory)
            try write("new bytes", to: temp)
            XCTAssertEqual(try commit(temp, to: final, overwrite: false), .existed)
        }
        XCTAssertEqual(try entries(), ["cat.jpg"])
        XCTAssertEqual(try contents(final), "old bytes")
    }

    func testCommitWithOverwriteReplacesAnExistingFile() throws {
        let final = directory + "/cat.jpg"
        try createFile(final, "old bytes")
        let temp = try TempFile.create(in: directory)
        try write("new bytes", to: temp)
        XCTAssertEqual(try commit(temp, to: final, overwrite: true), .saved)
        XCTAssertEqual(try contents(final), "new bytes")
        XCTAssertFalse(exists(temp.path))
        XCTAssertEqual(try entries(), ["cat.jpg"])
    }

    func testSymlinkAtFinalPathIsNotFollowedWithoutOverwrite() throws {
        let victim = directory + "/victim"
        try createFile(victim, "secret")
        let final = directory + "/cat.jpg"
        XCTAssertEqual(symlink(victim, final), 0)
        let temp = try TempFile.create(in: directory)
        try write("attacker-controlled", to: temp)

        XCTAssertEqual(try commit(temp, to: final, overwrite: false), .existed)
        XCTAssertTrue(isSymlink(final), "the planted link was replaced")
        XCTAssertEqual(try contents(victim), "secret")
    }

    func testDanglingSymlinkAtFinalPathIsNotFollowed() throws {
        let target = directory + "/created-through-link"
        let final = directory + "/cat.jpg"
        XCTAssertEqual(symlink(target, final), 0)
        let temp = try TempFile.create(in: directory)
        try write("body", to: temp)

        XCTAssertEqual(try commit(temp, to: final, overwrite: false), .existed)
        XCTAssertTrue(isSymlink(final))
        XCTAssertFalse(exists(target), "commit wrote through a dangling symlink")
    }

    func testOverwriteReplacesASymlinkInsteadOfWritingThroughIt() throws {
        let victim = directory + "/victim"
        try createFile(victim, "secret")
        let final = directory + "/cat.jpg"
        XCTAssertEqual(symlink(victim, final), 0)
        let temp = try TempFile.create(in: directory)
        try write("body", to: temp)

        XCTAssertEqual(try commit(temp, to: final, overwrite: true), .saved)
        XCTAssertFalse(isSymlink(final))
        XCTAssertEqual(try contents(final), "body")
        XCTAssertEqual(try contents(victim), "secret")
    }

    func testCommitIntoMissingDirectoryThrowsFilesystemError() throws {
        let temp = try TempFile.create(in: directory)
        try write("body", to: temp)
        XCTAssertThrowsError(try temp.commit(to: directory + "/missing/cat.jpg", overwrite: false)) { error in
            XCTAssertEqual((error as? DownloadError)?.kind, .filesystem)
        }
    }

    // MARK: - Helpers

    private func commit(_ temp: TempFile, to path: String, overwrite: Bool) throws -> TempFile.Commit {
        try temp.commit(to: path, overwrite: overwrite)
    }

    private func write(_ text: String, to temp: TempFile) throws {
        let failure = Array(text.utf8).withUnsafeBytes { temp.write($0) }
        XCTAssertNil(failure)
    }

    private func createFile(_ path: String, _ text: String) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    }

    private func contents(_ path: String) throws -> String {
        String(decoding: try XCTUnwrap(FileManager.default.contents(atPath: path)), as: UTF8.self)
    }

    private func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    private func mode(_ path: String) throws -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        return info.st_mode & 0o7777
    }
}

/// `TempFile.removeStale(in:)`: temp files of dead runs go, those of live runs stay.
final class StaleTempFileTests: XCTestCase {
    func testRemovesTempFilesOfDeadProcessesOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // PID 1 is alive; a PID above pid_max is not.
        let names = [".imgfetch-1-abc.part", ".imgfetch-99999999-abc.part", ".imgfetch-99999999-abc.part.side",
                     ".imgfetch-\(getpid())-mine.part", "photo.jpg", ".imgfetch-notapid.part"]
        for name in names { try Data("x".utf8).write(to: directory.appendingPathComponent(name)) }

        XCTAssertEqual(TempFile.removeStale(in: directory.path), 2)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(left, [".imgfetch-1-abc.part", ".imgfetch-\(getpid())-mine.part", ".imgfetch-notapid.part", "photo.jpg"].sorted())
    }

    func testNewTempFilesCarryThisProcesssPID() throws {
        let directory = FileManager.default.temporaryDirectory.path
        let file = try TempFile.create(in: directory)
        XCTAssertTrue((file.path as NSString).lastPathComponent.hasPrefix(".imgfetch-\(getpid())-"), file.path)
    }
}
