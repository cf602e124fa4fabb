import Glibc
import XCTest
@testable import ImgFetchCore

/// What differs between the kinds: named files' names (and their removal after a SIGKILL), the
/// unnamed ones' lack of any, and how a directory falls back.
final class TempFileKindTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var directory: String { scratch.path }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "imgfetch-tempkind")
    }

    override func tearDown() {
        scratch.remove()
    }

    // MARK: - Named

    func testANamedFileIsAHiddenPartFileInTheDirectory() throws {
        let temp = try TempFileDirectory(path: directory, kind: .named).create()
        let path = try XCTUnwrap(temp.path)
        let name = String(path.split(separator: "/").last ?? "")
        XCTAssertEqual(path, directory + "/" + name)
        XCTAssertTrue(name.hasPrefix(".imgfetch-\(getpid())@"), name)
        XCTAssertTrue(name.hasPrefix(".imgfetch-\(TempFile.processTag)-"), name)
        XCTAssertTrue(name.hasSuffix(".part"), name)
        XCTAssertEqual(scratch.entries(), [name])
    }

    func testADirectoryWithATrailingSlashGivesCleanNames() throws {
        let temp = try TempFileDirectory(path: directory + "/", kind: .named).create()
        XCTAssertFalse(try XCTUnwrap(temp.path).contains("//"))
    }

    func testNamesAreUniqueWithinTheDirectoryAndAcrossItsInstances() throws {
        let first = TempFileDirectory(path: directory, kind: .named)
        let second = TempFileDirectory(path: directory, kind: .named)
        let files = try (0..<20).map { _ in try first.create() } + (0..<20).map { _ in try second.create() }
        XCTAssertEqual(Set(files.compactMap(\.path)).count, 40)
    }

    func testANameTakenByAnotherFileIsSkipped() throws {
        let folder = TempFileDirectory(path: directory, kind: .named)
        // Names count up in base 36: plant the next one, which creation must pass over (O_EXCL).
        let current = folder.newName()
        let number = try XCTUnwrap(UInt64(current.dropLast(".part".count).split(separator: "-").last ?? "", radix: 36))
        let planted = current.replacingOccurrences(of: String(number, radix: 36) + ".part", with: String(number &+ 1, radix: 36) + ".part")
        XCTAssertTrue(FileManager.default.createFile(atPath: planted, contents: Data("planted".utf8)))
        let temp = try folder.create()
        XCTAssertNotNil(temp.path)
        XCTAssertNotEqual(temp.path, planted)
        XCTAssertEqual(FileManager.default.contents(atPath: planted), Data("planted".utf8))
    }

    // MARK: - Unnamed

    func testAnUnnamedFileHasNoNameUntilPlaced() throws {
        let temp = try TempFileDirectory(path: directory).create()
        XCTAssertNil(temp.path)
        XCTAssertNil(Array("body".utf8).withUnsafeBytes { temp.write($0) })
        try temp.writeOut()
        XCTAssertEqual(scratch.entries(), [])
        XCTAssertEqual(scratch.openFiles().count, 1)
        XCTAssertEqual(try temp.commit(to: directory + "/a.jpg", overwrite: false), .saved)
        XCTAssertEqual(scratch.entries(), ["a.jpg"])
        XCTAssertEqual(scratch.openFiles(), [], "committing releases the descriptor")
    }

    func testErrorsThatMeanNoUnnamedFiles() {
        for code in [EOPNOTSUPP, EISDIR, EINVAL] { XCTAssertTrue(TempFileDirectory.lacksUnnamedFiles(code), "\(code)") }
        for code in [ENOENT, EACCES, ENOSPC, EROFS, EMFILE] { XCTAssertFalse(TempFileDirectory.lacksUnnamedFiles(code), "\(code)") }
    }

    func testARealErrorIsReportedNotTakenForALackOfUnnamedFiles() {
        let folder = TempFileDirectory(path: directory + "/missing")
        XCTAssertThrowsError(try folder.create())
        XCTAssertNil(folder.kind, "a missing directory decides nothing")
    }

    // MARK: - Moving a copy where there are no hard links

    func testMovingANamedFileKeepsAnExistingOneUnlessOverwriting() throws {
        let folder = TempFileDirectory(path: directory, kind: .named)
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/a.jpg", contents: Data("old".utf8)))
        XCTAssertEqual(symlink(directory + "/a.jpg", directory + "/link.jpg"), 0)
        for (name, overwrite, expected, contents) in [("a.jpg", false, TempFile.Commit.existed, "old"), ("a.jpg", true, .saved, "new"),
                                                      ("b.jpg", false, .saved, "new"), ("link.jpg", false, .existed, "new")] {
            let temp = try folder.create()
            XCTAssertNil(Array("new".utf8).withUnsafeBytes { temp.write($0) })
            XCTAssertEqual(try temp.move(to: directory + "/" + name, overwrite: overwrite), expected, name)
            XCTAssertEqual(FileManager.default.contents(atPath: directory + "/" + name), Data(contents.utf8), name)
        }
        XCTAssertEqual(scratch.entries(), ["a.jpg", "b.jpg", "link.jpg"], "no temp file is left")
    }
}

/// `TempFile.removeStale(in:)`: named temp files of dead runs go, those of live runs stay.
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

    func testAnotherHostsTempFilesStayUntilTheyAreADayOld() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let host = String(TempFile.processTag.split(separator: "@")[1])
        XCTAssertEqual(host.count, 8)
        // A dead PID on this host goes; the same PID on another host says nothing, until a day has passed.
        let names = [".imgfetch-99999999@\(host)-a.part", ".imgfetch-99999999@00000000-b.part", ".imgfetch-99999999@00000000-old.part",
                     ".imgfetch-\(TempFile.processTag)-mine.part"]
        for name in names { try Data("x".utf8).write(to: directory.appendingPathComponent(name)) }
        var times = [timeval(tv_sec: time(nil) - 2 * 86400, tv_usec: 0), timeval(tv_sec: time(nil) - 2 * 86400, tv_usec: 0)]
        XCTAssertEqual(utimes(directory.appendingPathComponent(names[2]).path, &times), 0)

        XCTAssertEqual(TempFile.removeStale(in: directory.path), 2)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(left, [names[1], names[3]].sorted())
    }
}
