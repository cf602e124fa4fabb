import Dispatch
import Glibc

/// A queue of jobs and the threads that run them: the pipeline's one executor. The decode workers
/// (`DecodeStage`, one thread per core), the output thread (`ResultDelivery`), the index writer
/// (`CacheWriter`, in batches), the shard finisher (`DatasetWriter`) and the upload threads
/// (`ObjectUploader`) are each one.
///
/// Its life is one state, after swift-nio's `NIOThreadPool`: `running` with its queue, `draining`
/// (`close`: the queued jobs still run, and jobs they submit too, then the threads end),
/// `stopped`. `shutDown` instead hands the jobs still queued to the caller, unrun, so it can
/// answer them as cancelled; a job submitted once stopped is handed back the same way.
///
/// A worker takes one job per wake-up (`.one`, for several workers sharing a queue), every job
/// queued (`.all`: a batch of results costs one hand-off), or every job queued once `linger`
/// seconds have passed since the first or `limit` have come (`.batch`: the index writer's
/// transactions). An idle worker is woken only when a job it may take arrives.
///
/// Owns its threads; `state`, `idle`, `live` and `workers` are guarded by `condition` (a
/// `ConditionLock`), hence `@unchecked Sendable`.
final class Executor<Job>: @unchecked Sendable {
    /// How many jobs a worker takes at once.
    enum Taking: Sendable {
        case one
        case all
        case batch(linger: Double, limit: Int)
    }

    private enum State {
        case running(Deque<Job>)
        case draining(Deque<Job>)
        case stopped
    }

    private let condition = ConditionLock()
    private var state = State.running(Deque())
    /// Workers waiting for a job, and workers not yet ended.
    private var idle = 0
    private var live: Int
    private let taking: Taking
    private let perform: @Sendable ([Job]) -> Void
    private let threads = DispatchGroup()
    /// The executor's own threads, so that `close` from a job does not wait for itself.
    private var workers: [pthread_t] = []

    /// Starts one thread per name, each running `perform` on what it takes.
    init(threadNames names: [String], taking: Taking = .one, perform: @escaping @Sendable ([Job]) -> Void) {
        self.taking = taking
        self.perform = perform
        live = names.count
        for name in names {
            threads.enter()
            startThread(name: name) { [self] in
                condition.withLock { workers.append(pthread_self()) }
                work()
                threads.leave()
            }
        }
    }

    /// Queues `job` (while draining too: it runs before the threads end); once stopped, returns
    /// it unqueued instead.
    @discardableResult
    func submit(_ job: Job) -> Job? {
        condition.lock()
        var jobs: Deque<Job>
        let draining: Bool
        switch state {
        case .running(let queued): jobs = queued; draining = false
        case .draining(let queued): jobs = queued; draining = true
        case .stopped:
            condition.unlock()
            return job
        }
        state = .stopped  // not referenced twice while appended to: no copy of the queue
        jobs.append(job)
        let count = jobs.count
        state = draining ? .draining(jobs) : .running(jobs)
        // A lingering batch writer waits for its first job or a full batch, not for each one between.
        let wake: Bool = switch taking {
        case .one, .all: idle > 0
        case .batch(_, let limit): idle > 0 || count == limit
        }
        condition.unlock()
        // Outside the lock, so that the woken thread does not block on it at once.
        if wake { condition.signal() }
        return nil
    }

    /// Lets the queued jobs run, then ends the threads and waits for them; from a job of this
    /// executor, the threads end once it returns.
    func close() {
        condition.lock()
        if case .running(let jobs) = state { state = .draining(jobs) }
        let onOwnThread = workers.contains { pthread_equal($0, pthread_self()) != 0 }
        condition.broadcast()
        condition.unlock()
        if !onOwnThread { threads.wait() }
    }

    /// Ends the threads once their jobs in hand are done, and returns the jobs still queued,
    /// unrun; waits for the threads unless called from a job of this executor.
    func shutDown() -> [Job] {
        condition.lock()
        var queued: Deque<Job>
        switch state {
        case .running(let jobs), .draining(let jobs): queued = jobs
        case .stopped: queued = Deque()
        }
        state = .stopped
        let onOwnThread = workers.contains { pthread_equal($0, pthread_self()) != 0 }
        condition.broadcast()
        condition.unlock()
        if !onOwnThread { threads.wait() }
        var unrun: [Job] = []
        while let job = queued.popFirst() { unrun.append(job) }
        return unrun
    }

    private func work() {
        while let batch = next() { perform(batch) }
    }

    /// What this worker runs next; nil once it is to end.
    private func next() -> [Job]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch state {
            case .stopped:
                live -= 1
                return nil
            case .draining(let jobs) where jobs.isEmpty:
                // The others may be waiting too: they end as well. The last one stops the executor,
                // so a job submitted afterwards is handed back rather than queued for no one.
                live -= 1
                if live == 0 { state = .stopped }
                condition.broadcast()
                return nil
            case .running(let jobs) where jobs.isEmpty:
                idle += 1
                condition.wait()
                idle -= 1
            case .running, .draining:
                if case .batch(let linger, let limit) = taking, case .running(let jobs) = state, jobs.count < limit {
                    lingerForMore(seconds: linger, limit: limit)
                }
                return take()
            }
        }
    }

    /// Waits up to `seconds` while the batch is short of `limit` and the executor runs. Call with the lock held.
    private func lingerForMore(seconds: Double, limit: Int) {
        let deadline = ConditionLock.Deadline(secondsFromNow: seconds)
        while case .running(let jobs) = state, jobs.count < limit, condition.wait(until: deadline) {}
    }

    /// Takes what `taking` says from the queue. Call with the lock held and the queue not empty.
    private func take() -> [Job] {
        var jobs: Deque<Job>
        let draining: Bool
        switch state {
        case .running(let queued): jobs = queued; draining = false
        case .draining(let queued): jobs = queued; draining = true
        case .stopped: return []
        }
        state = .stopped  // not referenced twice while taken from: no copy of the queue
        var taken: [Job] = []
        switch taking {
        case .one:
            taken.append(jobs.popFirst()!)
        case .all, .batch:
            while let job = jobs.popFirst() { taken.append(job) }
        }
        state = draining ? .draining(jobs) : .running(jobs)
        return taken
    }
}
