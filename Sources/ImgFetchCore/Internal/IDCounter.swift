import Synchronization

/// Hands out 1, 2, 3, … to any thread: the ids of subscribers and transfers, which the engine and
/// the registry key by. A class, so that closures can share it.
final class IDCounter: Sendable {
    private let last = Atomic<Int>(0)

    func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}
