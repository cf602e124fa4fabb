import Foundation
@testable import ImgFetchCore

/// Collects completions and progress events from any thread, by caller id, and lets a test wait for them.
///
/// All state is guarded by `condition` (an `NSCondition`), hence `@unchecked Sendable`.
final class CompletionRecorder: @unchecked Sendable {
    struct ProgressEvent: Equatable {
        let received: Int64
        let expected: Int64?
    }

    private let condition = NSCondition()
    private var results: [Int: [DownloadResult]] = [:]
    private var order: [Int] = []
    private var events: [Int: [ProgressEvent]] = [:]

    /// A completion handler that records under `id`.
    func completion(_ id: Int) -> DownloadCompletionHandler {
        { [self] result in record(id, result) }
    }

    /// A progress handler that records under `id`.
    func progress(_ id: Int) -> DownloadProgressHandler {
        { [self] received, expected in
            condition.lock()
            events[id, default: []].append(ProgressEvent(received: received, expected: expected))
            condition.unlock()
        }
    }

    func record(_ id: Int, _ result: DownloadResult) {
        condition.lock()
        results[id, default: []].append(result)
        order.append(id)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `count` completions in all arrived; false on timeout.
    @discardableResult
    func waitForTotal(_ count: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while order.count < count {
            if !condition.wait(until: deadline) { return order.count >= count }
        }
        return true
    }

    /// Every completion recorded for `id`, in arrival order.
    func results(of id: Int) -> [DownloadResult] {
        condition.lock()
        defer { condition.unlock() }
        return results[id] ?? []
    }

    /// The only completion of `id`, or nil when there was none or more than one.
    func single(_ id: Int) -> DownloadResult? {
        let all = results(of: id)
        return all.count == 1 ? all[0] : nil
    }

    func progressEvents(of id: Int) -> [ProgressEvent] {
        condition.lock()
        defer { condition.unlock() }
        return events[id] ?? []
    }

    /// Caller ids in the order their completions arrived.
    var arrivalOrder: [Int] {
        condition.lock()
        defer { condition.unlock() }
        return order
    }

    var total: Int {
        condition.lock()
        defer { condition.unlock() }
        return order.count
    }

    /// How many completions each id got.
    var countsByID: [Int: Int] {
        condition.lock()
        defer { condition.unlock() }
        return results.mapValues(\.count)
    }
}
