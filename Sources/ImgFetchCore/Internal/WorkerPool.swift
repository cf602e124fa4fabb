import Dispatch

/// A fixed set of threads running submitted jobs in FIFO order.
///
/// Owns its threads; the job queue is guarded by `condition` (a `ConditionLock`), hence `@unchecked Sendable`.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let condition = ConditionLock()
    private var jobs = Deque<Job>()
    private var closing = false
    /// Threads waiting for a job: a submit wakes one only when one waits.
    private var idle = 0
    private let group = DispatchGroup()

    init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            group.enter()
            startThread(name: "\(name).\(index)") { [self] in
                work()
                group.leave()
            }
        }
    }

    func submit(_ job: @escaping Job) {
        condition.lock()
        jobs.append(job)
        let wake = idle > 0
        condition.unlock()
        // Signalled outside the lock, so that the woken thread does not block on it at once.
        if wake { condition.signal() }
    }

    /// Runs the jobs already submitted, then stops the threads and waits for them.
    func close() {
        condition.lock()
        closing = true
        condition.broadcast()
        condition.unlock()
        group.wait()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !closing {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs.popFirst()
            condition.unlock()
            guard let job else { return }
            job()
        }
    }
}
