import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The cache index of one output directory, `DIR/.imgfetch/index.sqlite`: for each normalized URL,
/// the response its files were saved from (validators, freshness, size, SHA-256) and the files.
///
/// SQLite in WAL mode: every change is one transaction, committed before the item's result is
/// reported, so a process killed at any moment leaves a consistent index that keeps every
/// reported entry; lookups read one row by primary key, so millions of entries cost no memory.
/// Two connections: lookups run on the caller's thread under `readerLock`; changes are applied by a
/// `CacheWriter` on its own thread, many per transaction, and `onCommitted` hears how far the
/// committed changes reach (see `commitTicket`). Hence `@unchecked Sendable`.
public final class CacheIndex: @unchecked Sendable {
    /// The database file.
    public let path: String
    private let reader: CacheStatements
    private let readerLock = Mutex(())
    private let writer: CacheWriter
    private let warn: @Sendable (String) -> Void
    private let warnedAboutWrites = WarningLatch()

    /// The folder in the output directory that holds the index.
    public static let folderName = ".imgfetch"
    static let schemaVersion = 5

    /// Opens (or creates) the index of `directory`. An index that is not a database or is damaged
    /// is moved aside to `index.sqlite.corrupt` and a new one is started; `warn` says so.
    /// `onCommitted` is called on the writer thread after each commit with the `commitTicket` it
    /// reached; it must not block.
    /// A write that fails for want of room (`SQLITE_FULL`) trips `diskSpace`.
    public init(directory: String, warn: @escaping @Sendable (String) -> Void, diskSpace: DiskSpaceGuard? = nil,
                onCommitted: @escaping @Sendable (UInt64) -> Void = { _ in }) throws(CacheIndexError) {
        let folder = OutputPaths.join(directory, Self.folderName)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw CacheIndexError("cannot create the cache folder \(folder): \(Errno.describe())")
        }
        path = folder + "/index.sqlite"
        // SQLite would create the index, its -wal and its -shm wherever a planted link points.
        for link in [folder, path] where Self.isSymbolicLink(link) {
            throw CacheIndexError(Self.symbolicLinkProblem(link))
        }
        self.warn = warn
        let writerStatements: CacheStatements
        do {
            writerStatements = try Self.openWriter(path)
        } catch let error where error.isUnusableFile {
            Self.moveAside(path)
            warn("cache index \(path) was unreadable (\(error.message)); moved it to index.sqlite.corrupt and started a new one")
            do {
                writerStatements = try Self.openWriter(path)
            } catch {
                throw CacheIndexError("cannot open the cache index \(path): \(error.message)")
            }
        } catch {
            throw CacheIndexError("cannot open the cache index \(path): \(error.message)")
        }
        do {
            let database = try SQLiteDatabase(path: path)
            // A lookup reads a few pages by key; the OS page cache holds the rest.
            try database.execute("PRAGMA busy_timeout = 10000; PRAGMA query_only = 1; PRAGMA cache_size = -128")
            reader = try CacheStatements(database)
        } catch {
            throw CacheIndexError("cannot open the cache index \(path): \(error.message)")
        }
        let path = path
        let latch = warnedAboutWrites
        writer = CacheWriter(statements: writerStatements, onError: { error in
            // The file is saved all the same; the next run downloads what this one could not record.
            if latch.isFirst() { warn("cannot update the cache index \(path): \(error.message)") }
            if error.isDiskFull {
                diskSpace?.note(DownloadError(.diskFull, "cannot update the cache index \(path): \(error.message)"))
            }
        }, onCommitted: onCommitted)
    }

    /// Whether `path` is a symbolic link (dangling or not).
    public static func isSymbolicLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// What is wrong with the symbolic link at `path`, where imgfetch keeps its own files.
    public static func symbolicLinkProblem(_ path: String) -> String {
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &target, target.count - 1)
        let pointsTo = count >= 0 ? " (to \(String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)))" : ""
        return "\(path) is a symbolic link\(pointsTo): imgfetch keeps its index and lock only in a real file and folder "
            + "there, and does not follow links that something else may have planted; remove the link"
    }

    /// The entry for a normalized URL, or nil. A failed read counts as no entry (the item is then downloaded).
    public func entry(for url: String) -> CacheEntry? {
        do {
            return try readerLock.withLock { _ throws(SQLiteError) in try reader.entry(for: url) }
        } catch {
            warnOnce("cannot read the cache index \(path): \(error.message)")
            return nil
        }
    }

    /// The robots.txt stored for `origin` while it is fresh at `now`, or nil.
    func robots(for origin: String, now: Double) -> StoredRobots? {
        do {
            return try readerLock.withLock { _ throws(SQLiteError) in try reader.robots(for: origin) }.flatMap { $0.expires > now ? $0 : nil }
        } catch {
            warnOnce("cannot read the cache index \(path): \(error.message)")
            return nil
        }
    }

    /// Records the robots.txt of `origin` (status and body), to be used until `expires`.
    func storeRobots(_ robots: StoredRobots, for origin: String) {
        writer.enqueue { statements throws(SQLiteError) in try statements.storeRobots(robots, for: origin) }
    }

    /// Records `entry`, replacing what the URL had; its files now belong to it alone.
    public func store(_ entry: CacheEntry) {
        writer.enqueue { statements throws(SQLiteError) in try statements.store(entry) }
    }

    /// Records one more file that holds the URL's output.
    public func addFile(_ file: CacheEntry.File, for url: String) {
        writer.enqueue { statements throws(SQLiteError) in try statements.addFile(file, url: url) }
    }

    /// A 304 confirmed the entry: takes the response's headers and freshness.
    public func refresh(url: String, headers: ResponseCacheHeaders, freshness: CacheFreshness) {
        writer.enqueue { statements throws(SQLiteError) in try statements.refresh(url: url, headers: headers, freshness: freshness) }
    }

    /// Forgets a URL (its response said no-store) and the files `names` (now holding that response).
    public func remove(url: String, names: [String]) {
        writer.enqueue { statements throws(SQLiteError) in try statements.remove(url: url, names: names) }
    }

    /// A number that `onCommitted` reaches once every change made before this call is committed
    /// (0 when none was made): a result reported after that is never lost from the index by a crash.
    public var commitTicket: UInt64 { writer.lastEnqueued }

    /// Waits until every change made so far is committed.
    public func flush() {
        writer.waitForCommit()
    }

    /// Commits what is pending and stops the writer thread; the index takes no changes afterwards.
    public func close() {
        writer.close()
    }

    deinit {
        writer.close()
    }

    private func warnOnce(_ message: String) {
        if warnedAboutWrites.isFirst() { warn(message) }
    }

    private static func openWriter(_ path: String) throws(SQLiteError) -> CacheStatements {
        let database = try SQLiteDatabase(path: path)
        // WAL: readers and the writer do not block each other, and a commit is one append.
        // synchronous=NORMAL: a commit survives the process being killed (not a power cut, which
        // at worst loses the last commits of a cache, never its consistency).
        // cache_size: 256 KiB of pages instead of SQLite's 2 MiB default, for the run's memory budget
        // (writes append; the OS page cache holds the rest of the file).
        // synchronous first: switching a new file to WAL would otherwise fsync it at FULL.
        try database.execute("PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL; "
            + "PRAGMA cache_size = -256")
        try database.transaction { () throws(SQLiteError) in try CacheSchema.prepare(database) }
        return try CacheStatements(database)
    }

    private static func moveAside(_ path: String) {
        rename(path, path + ".corrupt")
        unlink(path + "-wal")
        unlink(path + "-shm")
    }
}

/// True the first time it is asked, false ever after: one warning per run, not one per item.
private final class WarningLatch: Sendable {
    private let fired = Atomic<Bool>(false)

    func isFirst() -> Bool { !fired.exchange(true, ordering: .relaxed) }
}

/// Why the cache index could not be opened.
public struct CacheIndexError: Error, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A host's robots.txt as the index keeps it: the status it was answered with, its body (at most
/// `RobotsRules.maxBytes`), and when it stops being fresh (seconds since the epoch).
struct StoredRobots: Sendable, Equatable {
    let status: Int
    let body: [UInt8]
    let expires: Double
}
