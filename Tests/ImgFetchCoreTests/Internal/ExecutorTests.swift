import Dispatch
import XCTest
@testable import ImgFetchCore

final class ExecutorTests: XCTestCase {
    /// Records what ran, in order, and in which batches. A pthread lock, not a `Mutex`: the
    /// ThreadSanitizer run of these tests cannot see a `Mutex`'s futex.
    private final class Log: @unchecked Sendable {
        private let lock = ConditionLock()
        private var ranJobs: [Int] = []
        private var batchList: [[Int]] = []

        func record(_ jobs: [Int]) {
            lock.withLock {
                ranJobs += jobs
                batchList.append(jobs)
            }
        }

        var ran: [Int] { lock.withLock { ranJobs } }
        var batches: [[Int]] { lock.withLock { batchList } }
    }

    func testEveryJobRunsOnceAcrossTheWorkersAndCloseDrainsTheQueue() {
        let log = Log()
        let executor = Executor<Int>(threadNames: ["test.a", "test.b", "test.c"]) { jobs in
            XCTAssertEqual(jobs.count, 1, "each worker takes one job")
            log.record(jobs)
        }
        for number in 0..<2000 { XCTAssertNil(executor.submit(number)) }
        executor.close()
        XCTAssertEqual(log.ran.sorted(), Array(0..<2000))
        XCTAssertEqual(executor.submit(7), 7, "a stopped executor hands a job back")
    }

    func testOneWorkerTakingAllRunsJobsInOrder() {
        let log = Log()
        let gate = DispatchSemaphore(value: 0)
        let executor = Executor<Int>(threadNames: ["test.all"], taking: .all) { jobs in
            if jobs.first == 0 { gate.wait() }  // the rest queue up behind the first job
            log.record(jobs)
        }
        for number in 0..<50 { executor.submit(number) }
        gate.signal()
        executor.close()
        let batches = log.batches
        XCTAssertEqual(batches.flatMap { $0 }, Array(0..<50))
        XCTAssertLessThan(batches.count, 50, "a wake-up takes every job queued")
    }

    func testABatchLingersForMoreAndAFullOneGoesAtOnce() {
        let log = Log()
        let executor = Executor<Int>(threadNames: ["test.batch"], taking: .batch(linger: 0.5, limit: 10)) { jobs in
            log.record(jobs)
        }
        let started = DispatchTime.now()
        for number in 0..<10 { executor.submit(number) }
        XCTAssertTrue(eventually { log.batches.count == 1 })
        let waited = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        XCTAssertLessThan(waited, 0.5, "a full batch does not wait for the linger")
        executor.submit(10)
        executor.submit(11)
        executor.close()  // a closing writer stops lingering
        XCTAssertEqual(log.batches, [Array(0..<10), [10, 11]])
    }

    func testShutDownHandsBackWhatIsQueuedUnrun() {
        let log = Log()
        let inFirstJob = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let executor = Executor<Int>(threadNames: ["test.shut"]) { jobs in
            if jobs == [0] {
                inFirstJob.signal()
                release.wait()
            }
            log.record(jobs)
        }
        for number in 0..<5 { executor.submit(number) }
        inFirstJob.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { release.signal() }
        let unrun = executor.shutDown()
        XCTAssertEqual(unrun, [1, 2, 3, 4])
        XCTAssertEqual(log.ran, [0], "the job in hand finished; the others never ran")
        XCTAssertEqual(executor.submit(5), 5)
    }

    func testAJobMayCloseItsOwnExecutor() {
        let log = Log()
        let done = DispatchSemaphore(value: 0)
        let holder = Holder()
        let executor = Executor<Int>(threadNames: ["test.self"]) { jobs in
            if jobs == [1] { holder.executor?.close() }
            log.record(jobs)
            if jobs == [2] { done.signal() }
        }
        holder.executor = executor
        executor.submit(1)
        executor.submit(2)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the queued job still ran after the close")
        executor.close()
        XCTAssertEqual(log.ran, [1, 2])
        holder.executor = nil
    }
}

/// The executor a job closes, set once before the job runs (the executor's lock orders the write
/// before the job's read).
private final class Holder: @unchecked Sendable {
    var executor: Executor<Int>?
}

private func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while DispatchTime.now() < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}
