import Glibc

/// A pthread mutex with one condition variable: the part of `NSCondition` imgfetch uses.
///
/// imgfetch imports FoundationEssentials only. `NSCondition` lives in Foundation, and importing
/// Foundation for it maps libFoundation and ICU into every run (about 6 MiB of peak RSS and 3 ms
/// of start-up). Timed waits use `CLOCK_MONOTONIC`, so a clock change cannot stretch them.
///
/// The pthread objects are heap-allocated (they must not move) and guarded by themselves, hence
/// `@unchecked Sendable`.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }

    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Unlocks, waits for a signal, and locks again. Wake-ups may be spurious: wait in a loop.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// `wait()` until `deadline` at the latest; false once the deadline has passed.
    package func wait(until deadline: Deadline) -> Bool {
        var time = deadline.time
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    /// Wakes one waiter.
    package func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiter.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// A point in time on `CLOCK_MONOTONIC`.
    package struct Deadline: Sendable {
        fileprivate let time: timespec

        /// `seconds` from now; clamped to 0…10⁹ s (about 31 years), so any Double, even NaN or
        /// infinity, gives a valid deadline.
        package init(secondsFromNow seconds: Double) {
            let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 1e9)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let whole = clamped.rounded(.down)
            let nanoseconds = Int(now.tv_nsec) + Int((clamped - whole) * 1e9)
            time = timespec(tv_sec: now.tv_sec + Int(whole) + nanoseconds / 1_000_000_000,
                            tv_nsec: nanoseconds % 1_000_000_000)
        }
    }
}
