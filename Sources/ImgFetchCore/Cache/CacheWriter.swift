import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Applies the cache index's changes on its own thread, many per transaction, and says how far
/// the committed changes reach.
///
/// A commit appends whole pages to the WAL: one per item cost as much as the item's SQL itself.
/// The writer (`imgfetch.cache`, an `Executor` that takes batches) waits up to `linger` after the
/// first change of a batch for more to come, then commits them together. Every change gets a
/// number (`enqueue` returns it); after each commit `onCommitted` is told the highest number
/// committed (or failed), so whoever waits for a change to be durable (the output stage's result
/// delivery) knows when it is. The writer runs no one else's code but that signal: a slow stdout
/// never holds up a commit.
///
/// `enqueued` and `committed` are guarded by `condition` (a `ConditionLock`), and `statements`
/// are used on the writer thread only. Hence `@unchecked Sendable`.
final class CacheWriter: @unchecked Sendable {
    typealias Change = @Sendable (CacheStatements) throws(SQLiteError) -> Void

    private struct Numbered {
        let number: UInt64
        let change: Change
    }

    private let statements: CacheStatements
    private let onError: @Sendable (SQLiteError) -> Void
    private let onCommitted: @Sendable (UInt64) -> Void
    private let condition = ConditionLock()
    /// The number of the last change enqueued, and of the last one committed (or failed).
    private var enqueued: UInt64 = 0
    private var committed: UInt64 = 0
    private var writer: Executor<Numbered>!
    /// How long a batch stays open for more changes.
    static let linger = 0.005
    /// A batch this long is committed without lingering further.
    static let batchLimit = 256

    init(statements: CacheStatements, onError: @escaping @Sendable (SQLiteError) -> Void,
         onCommitted: @escaping @Sendable (UInt64) -> Void) {
        self.statements = statements
        self.onError = onError
        self.onCommitted = onCommitted
        writer = Executor(threadNames: ["imgfetch.cache"], taking: .batch(linger: Self.linger, limit: Self.batchLimit)) {
            [weak self] batch in
            // Weak: the writer belongs to this object; a batch after it is gone has no database.
            guard let self else { return }
            commit(batch.map(\.change))
            let last = batch.last!.number
            condition.withLock {
                committed = last
                // Threads in `waitForCommit` wait on this condition.
                condition.broadcast()
            }
            onCommitted(last)
        }
    }

    /// Queues `change`; returns its number.
    @discardableResult
    func enqueue(_ change: @escaping Change) -> UInt64 {
        condition.withLock {
            enqueued += 1
            // Numbered and queued under one lock: the writer's batches follow the numbers.
            writer.submit(Numbered(number: enqueued, change: change))
            return enqueued
        }
    }

    /// The number of the last change enqueued so far (0 before the first): once it is committed,
    /// so is every change enqueued before this call.
    var lastEnqueued: UInt64 { condition.withLock { enqueued } }

    /// Waits until every change enqueued before this call is committed (or failed).
    func waitForCommit() {
        condition.lock()
        let target = enqueued
        while committed < target { condition.wait() }
        condition.unlock()
    }

    /// Commits what is queued and stops the thread, then folds the write-ahead log into the
    /// index and truncates it, so that a run leaves `index.sqlite-wal` empty (SQLite would do so
    /// only when the last connection closes, which the process's exit does not wait for). On the
    /// closing thread: the writer's own has ended, so the connection has one user again.
    func close() {
        writer.close()
        try? statements.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Applies `changes` in one transaction. Most batches have no failing change and run without
    /// savepoints (a savepoint per change cost two more statements each). When one fails, the
    /// batch is rolled back and applied again with a savepoint per change, so that the bad one is
    /// undone alone and the others still land.
    private func commit(_ changes: [Change]) {
        var aChangeFailed = false
        do throws(SQLiteError) {
            try statements.database.transaction { () throws(SQLiteError) in
                for change in changes {
                    do throws(SQLiteError) {
                        try change(statements)
                    } catch {
                        aChangeFailed = true
                        throw error
                    }
                }
            }
            return
        } catch {
            // A failure of the transaction itself (busy, disk full) is not worth a second try.
            guard aChangeFailed else { return onError(error) }
        }
        do throws(SQLiteError) {
            try statements.database.transaction { () throws(SQLiteError) in
                for change in changes {
                    do throws(SQLiteError) {
                        try statements.database.execute("SAVEPOINT change")
                        try change(statements)
                        try statements.database.execute("RELEASE change")
                    } catch {
                        onError(error)
                        try statements.database.execute("ROLLBACK TO change; RELEASE change")
                    }
                }
            }
        } catch {
            onError(error)
        }
    }
}
