import Dispatch
import Glibc

/// The output stage's delivery: one thread, `imgfetch.output` (an `Executor`), runs every
/// completion handler, each once the cache index changes its result depends on are committed.
///
/// A job carries a commit ticket (`CacheIndex.commitTicket` when it was queued; 0 when it depends
/// on no change). The index writer reports each commit with `committed(through:)`; jobs whose
/// ticket is reached go to the thread in the order they were queued. So a reported result is in
/// the index even if the process is killed the next moment, and a completion handler that blocks
/// (a stdout pipe nobody reads) holds up neither the engine, nor the decoders, nor the index
/// commits.
///
/// The thread takes every ready job per wake-up, and is woken only when it sleeps: a batch of
/// results costs one hand-off, not one per item.
///
/// `waiting` and `committed` are guarded by `lock` (a `ConditionLock`), hence `@unchecked Sendable`.
final class ResultDelivery: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private struct Pending {
        let ticket: UInt64
        let job: Job
    }

    private let lock = ConditionLock()
    /// Jobs whose ticket is not committed yet, in the order they were queued.
    private var waiting: [Pending] = []
    private var committed: UInt64 = 0
    private let executor = Executor<Job>(threadNames: ["imgfetch.output"], taking: .all) { jobs in
        for job in jobs { job() }
    }

    /// Runs `job` on the delivery thread once the index has committed through `ticket`.
    func submit(after ticket: UInt64 = 0, _ job: @escaping Job) {
        lock.withLock {
            if ticket <= committed {
                executor.submit(job)
            } else {
                waiting.append(Pending(ticket: ticket, job: job))
            }
        }
    }

    /// The index has committed every change up to `ticket`. Called on the index's writer thread.
    func committed(through ticket: UInt64) {
        lock.withLock { release(through: ticket) }
    }

    /// Runs every job queued so far, then stops the thread. Every change the jobs wait for must be
    /// committed by now (the index is closed first), so none of them waits forever. From a job on
    /// the delivery thread (a completion handler that closes its downloader), the thread ends by
    /// itself once the job returns.
    func close() {
        lock.withLock { release(through: .max) }
        executor.close()
    }

    /// Hands the waiting jobs whose ticket is committed to the thread, in queued order; the others
    /// stay. Call with the lock held.
    private func release(through ticket: UInt64) {
        committed = max(committed, ticket)
        guard waiting.contains(where: { $0.ticket <= committed }) else { return }
        for pending in waiting where pending.ticket <= committed { executor.submit(pending.job) }
        waiting.removeAll { $0.ticket <= committed }
    }
}
