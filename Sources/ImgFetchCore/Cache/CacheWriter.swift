import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Applies the cache index's changes on its own thread, many per transaction, and runs each
/// `afterCommit` job once the changes queued before it are committed.
///
/// A commit appends whole pages to the WAL: one per item cost as much as the item's SQL itself.
/// The writer waits up to `linger` after the first change of a batch for more to come, then
/// commits them together. Results wait for the commit of their changes, so whatever was reported
/// is in the index even if the process is killed the next moment.
///
/// Owns its thread; `queue` is guarded by `condition` (a `ConditionLock`), and `statements` are
/// used on the writer thread only. Hence `@unchecked Sendable`. Jobs run on the writer thread: a
/// slow one delays the next commit.
final class CacheWriter: @unchecked Sendable {
    typealias Change = @Sendable (CacheStatements) throws(SQLiteError) -> Void

    private enum Item {
        case change(Change)
        case afterCommit(@Sendable () -> Void)
    }

    private let statements: CacheStatements
    private let onError: @Sendable (SQLiteError) -> Void
    private let condition = ConditionLock()
    private var queue: [Item] = []
    private var closing = false
    private let stopped = DispatchSemaphore(value: 0)
    /// The writer thread, once it runs: `close()` called from a job on it must not wait for itself.
    private let writerThread = Mutex<pthread_t?>(nil)
    /// How long a batch stays open for more changes.
    static let linger = 0.005
    /// A batch this long is committed without lingering further.
    static let batchLimit = 256

    init(statements: CacheStatements, onError: @escaping @Sendable (SQLiteError) -> Void) {
        self.statements = statements
        self.onError = onError
        startThread(name: "imgfetch.cache") { [self] in
            writerThread.withLock { $0 = pthread_self() }
            run()
            stopped.signal()
        }
    }

    func enqueue(_ change: @escaping Change) {
        append(.change(change))
    }

    /// Runs `job` on the writer thread once every change enqueued before it is committed (or failed).
    func afterCommit(_ job: @escaping @Sendable () -> Void) {
        append(.afterCommit(job))
    }

    /// Commits what is queued, runs the jobs waiting on it, and stops the thread.
    func close() {
        condition.lock()
        let wasClosing = closing
        closing = true
        condition.signal()
        condition.unlock()
        // From a job on the writer thread (a caller dropping the last reference to its downloader
        // in a completion handler), the loop ends by itself once the job returns.
        let onWriterThread = writerThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !wasClosing && !onWriterThread { stopped.wait() }
    }

    private func append(_ item: Item) {
        condition.lock()
        queue.append(item)
        // The writer waits for a first item, then lingers until the batch is full or its time is
        // up: waking it for every item in between would cost a context switch per item.
        if queue.count == 1 || queue.count == Self.batchLimit { condition.signal() }
        condition.unlock()
    }

    private func run() {
        while let batch = nextBatch() {
            commit(batch)
        }
    }

    /// The next batch, after lingering for more; nil once closed and drained.
    private func nextBatch() -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !closing { condition.wait() }
        if queue.isEmpty { return nil }
        let deadline = ConditionLock.Deadline(secondsFromNow: Self.linger)
        while queue.count < Self.batchLimit && !closing && condition.wait(until: deadline) {}
        defer { queue.removeAll(keepingCapacity: true) }
        return queue
    }

    private func commit(_ batch: [Item]) {
        let changes = batch.compactMap { item -> Change? in
            if case .change(let change) = item { return change }
            return nil
        }
        if !changes.isEmpty {
            do throws(SQLiteError) {
                try statements.database.transaction { () throws(SQLiteError) in
                    for change in changes {
                        // A change that fails is undone alone; the others of the batch still land.
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
        for item in batch {
            if case .afterCommit(let job) = item { job() }
        }
    }
}
