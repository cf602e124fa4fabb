import FoundationEssentials
import Glibc
import ImgFetchCore

/// How a run ended.
enum RunEnding: Sendable, Equatable {
    /// The list was read to the end and every item finished.
    case completed
    /// SIGINT or SIGTERM: exit with 128 + the signal number.
    case interrupted(signal: Int32)
    /// stdout's reader went away: stop quietly.
    case brokenPipe
    /// `--deadline` passed first: what is left fails with class `deadline`.
    case deadline
}

/// Coordinates the list reader, the download callbacks and the signal handlers of one run.
///
/// All state is guarded by `condition` (a `ConditionLock`), hence `@unchecked Sendable`.
final class RunControl: @unchecked Sendable {
    private let condition = ConditionLock()
    private var accepting = true
    private var outstanding = 0
    /// Bytes of table rows (captions and passed-through columns) admitted and not yet done.
    private var heldRowBytes = 0
    /// The list reader waits for rows to be done (not for the item count): each done row wakes it.
    private var readerWaitsForRowBytes = false
    private var listDone = false
    /// A list met an I/O error: the rest of it was never read.
    private var unreadableList = false
    private var ending: RunEnding?
    /// What a signal after the run completed still stops (the last shard's upload); set once, before signals.
    private var lateStop: (@Sendable () -> Void)?
    /// A signal that came after the run completed, while its last shard was still being finished.
    private var lateSignal: Int32?
    /// Most items admitted and not yet finished: the list reader waits beyond this, so a list of
    /// millions of lines never sits in memory at once.
    let maxOutstanding: Int
    /// Where a full window lets the list reader go on: an eighth below the top, so that it is
    /// woken once per batch of items and not once per item.
    let resumeAt: Int
    /// The list reader waits for the window to drain to `resumeAt`.
    private var readerWaitsForWindow = false

    init(maxOutstanding: Int) {
        self.maxOutstanding = maxOutstanding
        resumeAt = maxOutstanding - max(1, maxOutstanding / 8)
    }

    /// Pending items beyond the running ones: enough for LIFO and priority classes to reorder,
    /// little enough to stay small.
    static let pendingWindow = 4096

    /// The window for a run of `concurrency` simultaneous transfers.
    static func window(concurrency: Int) -> Int { pendingWindow + concurrency }

    /// The window of a WebDataset run: a finished row waits (holding its output file open) for the
    /// rows before it, so the window bounds the open files too.
    static func datasetWindow(concurrency: Int) -> Int { 1024 + concurrency }

    /// Most bytes of table rows held by items in flight: the window's 4096 items could otherwise
    /// hold 4096 rows of up to 1 MiB each.
    static let rowByteBudget = 64 << 20

    /// Counts a new item (holding `rowBytes` of its table row) as outstanding, waiting while
    /// `maxOutstanding` items are, or while its row would take the rows past `rowByteBudget`;
    /// false when the run is stopping.
    func admit(rowBytes: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if outstanding >= maxOutstanding {
            // A full window: wait for a batch to drain, not for one item (a wake-up per item cost
            // the list reader and the delivery thread a futex round trip and a context switch each).
            readerWaitsForWindow = true
            while accepting && outstanding > resumeAt { condition.wait() }
            readerWaitsForWindow = false
        }
        while accepting && (outstanding >= maxOutstanding
                            || (heldRowBytes > 0 && heldRowBytes + rowBytes > Self.rowByteBudget)) {
            readerWaitsForRowBytes = outstanding < maxOutstanding
            condition.wait()
        }
        readerWaitsForRowBytes = false
        guard accepting else { return false }
        outstanding += 1
        heldRowBytes += rowBytes
        return true
    }

    /// An admitted item (that held `rowBytes` of its table row) has its result.
    func itemDone(rowBytes: Int = 0) {
        condition.lock()
        heldRowBytes -= rowBytes
        outstanding -= 1
        if listDone && outstanding == 0 && ending == nil { ending = .completed }
        // Wake the waiters only when what they wait for may have come: room for the list reader
        // (an eighth of the window, once it was full), or no item left. A wake-up per item cost
        // the main thread a futex round trip and a context switch for every image.
        let windowReopened = readerWaitsForWindow ? outstanding == resumeAt : outstanding == maxOutstanding - 1
        if windowReopened || outstanding == 0 || (rowBytes > 0 && readerWaitsForRowBytes) { condition.broadcast() }
        condition.unlock()
    }

    /// A list could not be read on.
    func listUnreadable() {
        condition.withLock { unreadableList = true }
    }

    /// Whether a list could not be read to its end.
    var wasListUnreadable: Bool { condition.withLock { unreadableList } }

    /// The list reader reached the end of every list.
    func listFinished() {
        condition.lock()
        listDone = true
        if outstanding == 0 && ending == nil { ending = .completed }
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the run early; only the first reason counts. Returns true for the first call.
    @discardableResult
    func stop(_ reason: RunEnding) -> Bool {
        condition.lock()
        accepting = false
        guard ending == nil else {
            // Every item is counted, but a dataset's last shard may still be going up: a signal
            // ends that upload, and the exit code is the signal's.
            var late: (@Sendable () -> Void)?
            if case .interrupted(let signal) = reason, ending == .completed, lateSignal == nil, let hook = lateStop {
                lateSignal = signal
                late = hook
            }
            condition.unlock()
            late?()
            return false
        }
        ending = reason
        condition.broadcast()
        condition.unlock()
        return true
    }

    /// `stop` calls `body` for a signal that comes after the run completed.
    func onLateSignal(_ body: @escaping @Sendable () -> Void) {
        condition.withLock { lateStop = body }
    }

    /// The signal that came after the run completed, if one did.
    var signalAfterCompletion: Int32? {
        condition.withLock { lateSignal }
    }

    /// Blocks until the run completes or is stopped, or until `deadline` (seconds from now) passes.
    func waitForEnding(deadline: Double? = nil) -> RunEnding {
        condition.lock()
        defer { condition.unlock() }
        let limit = deadline.map { ConditionLock.Deadline(secondsFromNow: $0) }
        while ending == nil {
            if let limit {
                if !condition.wait(until: limit) && ending == nil { ending = .deadline }
            } else {
                condition.wait()
            }
        }
        accepting = false
        // The list reader may wait in `admit` for room that will not come now.
        condition.broadcast()
        return ending!
    }

    /// Blocks until every admitted item has its result.
    func waitForOutstanding() {
        condition.lock()
        defer { condition.unlock() }
        while outstanding > 0 { condition.wait() }
    }
}
