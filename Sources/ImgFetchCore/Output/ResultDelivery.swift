import Dispatch
import Glibc

/// The output stage's executor: one thread, `imgfetch.output`, that runs every completion
/// handler, each once the cache index changes its result depends on are committed.
///
/// A job carries a commit ticket (`CacheIndex.commitTicket` when it was queued; 0 when it depends
/// on no change). The index writer reports each commit with `committed(through:)`; jobs whose
/// ticket is reached run in the order they were queued. So a reported result is in the index even
/// if the process is killed the next moment, and a completion handler that blocks (a stdout pipe
/// nobody reads) holds up neither the engine, nor the decoders, nor the index commits.
///
/// The thread drains every ready job per wake-up, and is woken only when it sleeps and a job is
/// ready: a batch of results costs one hand-off, not one per item.
///
/// Owns its thread; `jobs`, `committed`, `sleeping` and `closing` are guarded by `condition` (a
/// `ConditionLock`). Hence `@unchecked Sendable`.
final class ResultDelivery: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private struct Pending {
        let ticket: UInt64
        let job: Job
    }

    private let condition = ConditionLock()
    private var jobs: [Pending] = []
    private var committed: UInt64 = 0
    private var sleeping = false
    private var closing = false
    private var thread: pthread_t?
    private let stopped = DispatchSemaphore(value: 0)

    init() {
        startThread(name: "imgfetch.output") { [self] in
            condition.withLock { thread = pthread_self() }
            run()
            stopped.signal()
        }
    }

    /// Runs `job` on the delivery thread once the index has committed through `ticket`.
    func submit(after ticket: UInt64 = 0, _ job: @escaping Job) {
        condition.lock()
        jobs.append(Pending(ticket: ticket, job: job))
        let wake = sleeping && ticket <= committed
        if wake { sleeping = false }
        condition.unlock()
        if wake { condition.signal() }
    }

    /// The index has committed every change up to `ticket`. Called on the index's writer thread.
    func committed(through ticket: UInt64) {
        condition.lock()
        committed = max(committed, ticket)
        let wake = sleeping && !jobs.isEmpty
        if wake { sleeping = false }
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Runs every job queued so far, then stops the thread. Every change the jobs wait for must be
    /// committed by now (the index is closed first), so none of them waits forever. From a job on
    /// the delivery thread (a completion handler that closes its downloader), the thread ends by
    /// itself once the job returns.
    func close() {
        condition.lock()
        let wasClosing = closing
        closing = true
        committed = .max
        sleeping = false
        let onOwnThread = thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        condition.unlock()
        condition.signal()
        if !wasClosing && !onOwnThread { stopped.wait() }
    }

    private func run() {
        var ready: [Job] = []
        while true {
            condition.lock()
            while true {
                takeReady(into: &ready)
                if !ready.isEmpty || (closing && jobs.isEmpty) { break }
                sleeping = true
                condition.wait()
            }
            let finished = closing && jobs.isEmpty && ready.isEmpty
            condition.unlock()
            if finished { return }
            for job in ready { job() }
            ready.removeAll(keepingCapacity: true)
        }
    }

    /// Moves the jobs whose ticket is committed into `ready`, in queued order; the others stay.
    /// Call with the lock held.
    private func takeReady(into ready: inout [Job]) {
        for pending in jobs where pending.ticket <= committed { ready.append(pending.job) }
        jobs.removeAll { $0.ticket <= committed }
    }
}
