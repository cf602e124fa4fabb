import Synchronization

/// A request to stop, from any thread, heard by what is running when it comes: each piece of work
/// that can be ended registers how (`whileRunning`), and `request` calls every registered ending.
/// Work that begins after the request finds `requested` set.
public final class CancelSignal: Sendable {
    private struct State {
        var requested = false
        var endings: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Asks for the stop: every piece of work running now is ended.
    public func request() {
        let endings = state.withLock { state in
            state.requested = true
            defer { state.endings.removeAll() }
            return Array(state.endings.values)
        }
        for end in endings { end() }
    }

    public var requested: Bool { state.withLock { $0.requested } }

    /// Runs `body` with `end` registered: a request while it runs calls `end` (once, on the
    /// requesting thread). When the stop was requested already, `end` is called at once, before
    /// `body` runs.
    func whileRunning<T, E: Error>(ending end: @escaping @Sendable () -> Void, _ body: () throws(E) -> T) throws(E) -> T {
        let id: Int? = state.withLock { state in
            guard !state.requested else { return nil }
            state.nextID += 1
            state.endings[state.nextID] = end
            return state.nextID
        }
        if id == nil { end() }
        defer { if let id { state.withLock { _ = $0.endings.removeValue(forKey: id) } } }
        return try body()
    }
}
