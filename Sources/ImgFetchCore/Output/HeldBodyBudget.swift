import Synchronization

/// Bounds the bytes that all temp files together hold in memory (`TempFile.memoryLimit` each).
///
/// Without it, memory grew with `-j`: a thousand transfers of small images held up to 128 KiB
/// each. A body whose growth does not fit streams to its file instead, as a large one always does.
/// The counter is an `Atomic`: files grow on the engine thread and are freed on decode threads.
final class HeldBodyBudget: Sendable {
    /// Most bytes held in memory at once.
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `bytes` from the budget if they fit; false leaves the budget unchanged.
    func reserve(_ bytes: Int) -> Bool {
        let after = held.add(bytes, ordering: .relaxed).newValue
        guard after > limit else { return true }
        held.subtract(bytes, ordering: .relaxed)
        return false
    }

    func release(_ bytes: Int) {
        held.subtract(bytes, ordering: .relaxed)
    }

    /// Bytes held right now.
    var heldBytes: Int { held.load(ordering: .relaxed) }

    /// What a run holds at most: enough for the default 16 transfers and 32-body decode backlog to
    /// keep every small image in memory, and no more however high `-j` goes.
    static let defaultLimit = 16 << 20
}
