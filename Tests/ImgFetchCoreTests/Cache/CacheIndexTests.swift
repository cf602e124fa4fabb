@testable import ImgFetchCore
import XCTest

/// `CacheIndex`: SQLite entries that survive reopening, damage and many rows.
final class CacheIndexTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        scratch.remove()
    }

    private func open(_ warnings: LockedState<[String]>? = nil) throws -> CacheIndex {
        try CacheIndex(directory: scratch.path) { message in warnings?.withLock { $0.append(message) } }
    }

    private func entry(_ url: String, files: [String] = ["a.jpg"], etag: String? = "\"1\"") -> CacheEntry {
        CacheEntry(url: url, kind: "original", format: .png,
                   image: ImageInfo(width: 3, height: 2, channels: 4, bitDepth: 16, orientation: 6, verified: true),
                   headers: ResponseCacheHeaders(etag: etag, lastModified: "LM", date: "D", age: "5",
                                                 cacheControl: "max-age=60", expires: nil, pragma: nil),
                   freshness: CacheFreshness(lifetime: 60, initialAge: 5, responseTime: 1_800_000_000.25),
                   bodySize: 1234, contentHash: String(repeating: "ab", count: 32),
                   files: files.map { CacheEntry.File(name: $0, size: 1234) })
    }

    func testAnEntryReadsBackAsStoredAfterReopening() throws {
        var stored = entry("http://h/a.png", files: ["a.png", "b.png"])
        stored.files[1] = CacheEntry.File(name: "b.png", size: 5, inode: UInt64.max - 1, modified: 1_800_000_000_123_456_789)
        let first = try open()
        first.store(stored)
        first.close()
        XCTAssertEqual(try open().entry(for: "http://h/a.png"), stored)
        XCTAssertNil(try open().entry(for: "http://h/other.png"))
    }

    func testFilesMoveToTheirNewestURLAndCopiesJoin() throws {
        let index = try open()
        index.store(entry("http://h/1", files: ["x.jpg"]))
        index.store(entry("http://h/2", files: ["x.jpg"]))
        index.flush()
        XCTAssertEqual(index.entry(for: "http://h/1")?.files, [], "x.jpg now holds URL 2's body")
        index.addFile(CacheEntry.File(name: "y.jpg", size: 7), for: "http://h/2")
        index.flush()
        XCTAssertEqual(index.entry(for: "http://h/2")?.files.map(\.name), ["x.jpg", "y.jpg"])
        index.remove(url: "http://h/2", names: ["x.jpg"])
        index.flush()
        XCTAssertNil(index.entry(for: "http://h/2"))
    }

    func testRefreshTakesTheNewValidatorsAndFreshness() throws {
        let index = try open()
        index.store(entry("http://h/a"))
        let freshness = CacheFreshness(lifetime: 999, initialAge: 1, responseTime: 1_900_000_000)
        index.refresh(url: "http://h/a", headers: ResponseCacheHeaders(etag: "\"2\"", cacheControl: "max-age=999"), freshness: freshness)
        index.flush()
        let refreshed = try XCTUnwrap(index.entry(for: "http://h/a"))
        XCTAssertEqual(refreshed.headers.etag, "\"2\"")
        XCTAssertNil(refreshed.headers.lastModified)
        XCTAssertEqual(refreshed.freshness, freshness)
        XCTAssertEqual(refreshed.files.map(\.name), ["a.jpg"], "files are kept")
    }

    func testADamagedFileIsMovedAsideWithAWarning() throws {
        let folder = scratch.path + "/.imgfetch"
        XCTAssertEqual(mkdir(folder, 0o755), 0)
        try Data("not a database, just text that is long enough to have a header".utf8)
            .write(to: URL(fileURLWithPath: folder + "/index.sqlite"))
        let warnings = LockedState<[String]>([])
        let index = try open(warnings)
        index.store(entry("http://h/a"))
        index.flush()
        XCTAssertNotNil(index.entry(for: "http://h/a"))
        let messages = warnings.withLock { $0 }
        XCTAssertEqual(messages.count, 1)
        XCTAssertTrue(messages.first?.contains("index.sqlite.corrupt") ?? false, "\(messages)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/index.sqlite.corrupt"))
    }

    func testAnIndexOfAnotherSchemaVersionStartsEmpty() throws {
        let first = try open()
        first.store(entry("http://h/a"))
        first.close()
        let database = try SQLiteDatabase(path: scratch.path + "/.imgfetch/index.sqlite")
        try database.execute("PRAGMA user_version = 99")
        XCTAssertNil(try open().entry(for: "http://h/a"))
    }

    func testAVersion3IndexGainsTheOutputSizeAndKeepsItsEntries() throws {
        let first = try open()
        var converted = entry("http://h/a")
        converted.image = ImageInfo(width: 300, height: 200, channels: 3, bitDepth: 8, verified: true)
        converted.image?.outputWidth = 64
        converted.image?.outputHeight = 43
        first.store(converted)
        first.store(entry("http://h/b"))
        first.close()
        // What version 3 had: the same table without the two output columns.
        let database = try SQLiteDatabase(path: scratch.path + "/.imgfetch/index.sqlite")
        let columns = """
            url, final_url, kind, format, width, height, channels, bit_depth, orientation, verified, etag, last_modified, date, age,
            cache_control, expires, pragma, max_age, no_cache, must_revalidate, freshness_lifetime, initial_age, response_time,
            body_size, sha256
            """
        try database.execute("""
            CREATE TABLE old (url TEXT PRIMARY KEY, final_url TEXT NOT NULL, kind TEXT NOT NULL, format TEXT NOT NULL,
                width INTEGER, height INTEGER, channels INTEGER, bit_depth INTEGER, orientation INTEGER, verified INTEGER NOT NULL,
                etag TEXT, last_modified TEXT, date TEXT, age TEXT, cache_control TEXT, expires TEXT, pragma TEXT,
                max_age INTEGER, no_cache INTEGER NOT NULL, must_revalidate INTEGER NOT NULL,
                freshness_lifetime REAL NOT NULL, initial_age REAL NOT NULL, response_time REAL NOT NULL,
                body_size INTEGER NOT NULL, sha256 TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO old (\(columns)) SELECT \(columns) FROM entries;
            DROP TABLE entries; ALTER TABLE old RENAME TO entries; PRAGMA user_version = 3
            """)
        let reopened = try open()
        XCTAssertEqual(reopened.entry(for: "http://h/b")?.files.map(\.name), ["a.jpg"], "entries are kept")
        let image = try XCTUnwrap(reopened.entry(for: "http://h/a")?.image)
        XCTAssertEqual(image.width, 300)
        XCTAssertNil(image.outputWidth, "version 3 did not record it")
        reopened.store(converted)
        reopened.flush()
        XCTAssertEqual(reopened.entry(for: "http://h/a")?.image?.outputWidth, 64)
        XCTAssertEqual(reopened.entry(for: "http://h/a")?.image?.outputHeight, 43)
    }

    func testRobotsTxtReadsBackWhileFreshAndAVersion4IndexGainsItsTable() throws {
        let first = try open()
        first.store(entry("http://h/a"))
        let body = Array("User-agent: *\nDisallow: /x\n".utf8) + [0, 255]
        first.storeRobots(StoredRobots(status: 200, body: body, expires: 2_000), for: "http://h:80")
        first.storeRobots(StoredRobots(status: 404, body: [], expires: 2_000), for: "http://g:80")
        first.flush()
        XCTAssertEqual(first.robots(for: "http://h:80", now: 1_000), StoredRobots(status: 200, body: body, expires: 2_000))
        XCTAssertEqual(first.robots(for: "http://g:80", now: 1_000)?.body, [], "an empty body reads back empty")
        XCTAssertNil(first.robots(for: "http://h:80", now: 2_000), "a stale robots.txt is not used")
        XCTAssertNil(first.robots(for: "http://other:80", now: 1_000))
        first.close()
        // Version 4 had no robots table: it is added, and the entries stay.
        let database = try SQLiteDatabase(path: scratch.path + "/.imgfetch/index.sqlite")
        try database.execute("DROP TABLE robots; PRAGMA user_version = 4")
        let reopened = try open()
        XCTAssertNotNil(reopened.entry(for: "http://h/a"))
        XCTAssertNil(reopened.robots(for: "http://h:80", now: 1_000))
        reopened.storeRobots(StoredRobots(status: 200, body: body, expires: 2_000), for: "http://h:80")
        reopened.flush()
        XCTAssertEqual(reopened.robots(for: "http://h:80", now: 1_000)?.body, body)
    }

    func testAnUnwritableFolderIsAnErrorThatNamesIt() throws {
        let blocker = scratch.path + "/file"
        try Data().write(to: URL(fileURLWithPath: blocker))
        XCTAssertThrowsError(try CacheIndex(directory: blocker) { _ in }) { error in
            XCTAssertTrue("\(error)".contains(blocker + "/.imgfetch"), "\(error)")
        }
    }

    func testAFailedChangeIsUndoneAloneAndWarnedOnce() throws {
        let warnings = LockedState<[String]>([])
        let index = try open(warnings)
        index.store(entry("http://h/a"))
        let database = try SQLiteDatabase(path: scratch.path + "/.imgfetch/index.sqlite")
        try database.execute("PRAGMA busy_timeout = 10000; CREATE TRIGGER refuse BEFORE INSERT ON files WHEN NEW.name = 'bad.jpg' "
            + "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        index.store(entry("http://h/bad", files: ["bad.jpg"]))
        index.store(entry("http://h/bad2", files: ["bad.jpg"]))
        index.store(entry("http://h/good", files: ["good.jpg"]))
        index.flush()
        XCTAssertNil(index.entry(for: "http://h/bad"), "the failed store left nothing half-done")
        XCTAssertEqual(index.entry(for: "http://h/good")?.files.map(\.name), ["good.jpg"])
        let messages = warnings.withLock { $0 }
        XCTAssertEqual(messages.count, 1, "\(messages)")
        XCTAssertTrue(messages.first?.contains("refused by the test") ?? false, "\(messages)")
    }

    func testManyEntriesAreLookedUpByKey() throws {
        let index = try open()
        for number in 0..<5000 {
            index.store(entry("http://h/\(number)", files: ["f\(number).jpg"]))
        }
        index.flush()
        XCTAssertEqual(index.entry(for: "http://h/4321")?.files.map(\.name), ["f4321.jpg"])
        XCTAssertNil(index.entry(for: "http://h/5000"))
    }
}

/// `CacheWriter`: a commit is announced only once its changes are visible to another connection.
final class CacheWriterTests: XCTestCase {
    func testACommitIsAnnouncedOnlyOnceItsChangesAreVisible() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/.imgfetch/index.sqlite"
        let observer = LockedState<Observer?>(nil)
        let seen = LockedState<[(ticket: UInt64, rows: Int64)]>([])
        let index = try CacheIndex(directory: scratch.path, warn: { _ in }) { ticket in
            let rows = observer.withLock { $0?.rows() } ?? 0
            seen.withLock { $0.append((ticket, rows)) }
        }
        observer.withLock { $0 = try? Observer(path: path) }
        var tickets: [UInt64] = []
        for number in 0..<200 {
            index.store(minimalEntry(number))
            tickets.append(index.commitTicket)
        }
        XCTAssertEqual(tickets, Array(1...200), "every change gets the next number")
        index.close()
        let announced = seen.withLock { $0 }
        XCTAssertEqual(announced.last?.ticket, 200, "closing commits and announces every change")
        for (ticket, rows) in announced {
            XCTAssertGreaterThanOrEqual(rows, Int64(ticket), "commit \(ticket) was announced before its changes were visible")
        }
    }

    func testFlushWaitsForTheCommit() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let index = try CacheIndex(directory: scratch.path) { _ in }
        let observer = try Observer(path: scratch.path + "/.imgfetch/index.sqlite")
        for number in 0..<50 {
            index.store(minimalEntry(number))
        }
        index.flush()
        XCTAssertEqual(observer.rows(), 50)
        index.close()
    }
}

/// An entry with nothing but its URL, `http://h/NUMBER`.
private func minimalEntry(_ number: Int) -> CacheEntry {
    CacheEntry(url: "http://h/\(number)", kind: "original", format: .jpeg, image: nil, headers: ResponseCacheHeaders(),
               freshness: CacheFreshness(lifetime: 0, initialAge: 0, responseTime: 0), bodySize: 1, contentHash: "h", files: [])
}

/// A second connection that counts the entries; used by one thread at a time (the writer thread
/// in its commit announcements, or the test's own), hence `@unchecked Sendable`.
private final class Observer: @unchecked Sendable {
    private let database: SQLiteDatabase
    private let count: SQLiteStatement

    init(path: String) throws {
        database = try SQLiteDatabase(path: path)
        count = try database.prepare("SELECT count(*) FROM entries")
    }

    func rows() -> Int64 {
        defer { count.reset() }
        return (try? count.bind([]).step()) == true ? count.integer(0) ?? -1 : -1
    }
}
