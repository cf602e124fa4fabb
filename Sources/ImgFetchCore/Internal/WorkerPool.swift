import Dispatch

/// A fixed set of threads running submitted jobs in FIFO order.
///
/// Owns its threads; the job queue is guarded by `condition` (a `ConditionLock`), hence `@unchecked Sendable`.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let condition = ConditionLock()
    private var jobs = Deque<Job>()
    private var closing = false
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
        condition.signal()
        condition.unlock()
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
            while jobs.isEmpty && !closing { condition.wait() }
            let job = jobs.popFirst()
            condition.unlock()
            guard let job else { return }
            job()
        }
    }
}
