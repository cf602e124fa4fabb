import FoundationEssentials
import Glibc

/// Bounds the memory that concurrent decodes hold at once, from each image's own estimate (read
/// from its header before any pixel memory is allocated).
///
/// A progressive 12-megapixel JPEG keeps about 36 MB of coefficients for its whole decode; two of
/// them on two decode threads doubled the peak RSS. Decodes whose estimate is at most `exempt`
/// (every baseline JPEG and PNG: they stream a few rows) never wait, so small images still decode
/// in parallel. Larger ones run together only while their sum stays within `limit`; one that
/// exceeds `limit` on its own runs when no other large decode does.
///
/// The counter is guarded by `condition` (a `ConditionLock`), hence `@unchecked Sendable`.
final class DecodeMemoryBudget: @unchecked Sendable {
    /// Most bytes that large decodes hold together (unless a single one needs more).
    let limit: Int
    /// Estimates up to this many bytes are not counted: their total is bounded by the number of decode threads.
    let exempt: Int
    private let condition = ConditionLock()
    private var held = 0

    init(limit: Int, exempt: Int) {
        self.limit = limit
        self.exempt = exempt
    }

    /// Runs `body` once `bytes` fit in the budget, holding them until it returns.
    func withReservation<T, E: Error>(_ bytes: Int, _ body: () throws(E) -> T) throws(E) -> T {
        guard bytes > exempt else { return try body() }
        reserve(bytes)
        defer { release(bytes) }
        return try body()
    }

    /// Bytes that large decodes hold right now.
    var heldBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return held
    }

    private func reserve(_ bytes: Int) {
        condition.lock()
        while held > 0 && held + bytes > limit { condition.wait() }
        held += bytes
        condition.unlock()
    }

    private func release(_ bytes: Int) {
        condition.lock()
        held -= bytes
        condition.broadcast()
        condition.unlock()
    }
}
