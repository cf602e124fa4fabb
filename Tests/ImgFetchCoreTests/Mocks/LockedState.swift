import Foundation

/// A value behind an `NSLock`, for test doubles shared across threads.
///
/// Not `Synchronization.Mutex`: on Linux it locks with raw futexes, which ThreadSanitizer cannot
/// see, so every access under it is reported as a race. `NSLock` is a pthread mutex, which TSan
/// understands. The value is only reached through `withLock`, hence `@unchecked Sendable`.
final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
