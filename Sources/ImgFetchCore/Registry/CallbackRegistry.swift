import Dispatch
import Synchronization

/// The URL-keyed callback registry of SDWebImageDownloader: normalized URL → the subscribers
/// waiting for its one in-flight transfer, plus what became of URLs already finished.
///
/// State is guarded by `queue`, a concurrent DispatchQueue used as a reader/writer lock:
/// mutations (subscribe, complete, cancel) run as barriers, progress fan-out reads a snapshot with
/// a plain `sync`. Hence `@unchecked Sendable`.
final class CallbackRegistry: @unchecked Sendable {
    private let queue = DispatchQueue(label: "imgfetch.registry", attributes: .concurrent)
    private var entries: [String: Entry] = [:]
    private var finished: [String: FinishedItem] = [:]
    /// Keys of `finished`, oldest first: beyond `finishedCapacity` the oldest are forgotten, so a
    /// run over millions of URLs stays small (a duplicate that far apart is fetched again).
    private var finishedOrder = Deque<String>()
    let finishedCapacity: Int

    init(finishedCapacity: Int = 16_384) {
        self.finishedCapacity = finishedCapacity
    }

    private struct Entry {
        let transfer: Transfer
        var subscribers: [Subscriber]
    }

    /// What a `subscribe` did.
    enum Subscription {
        /// The URL had no transfer: the caller must start `transfer`.
        case created(Transfer)
        /// The subscriber joined the URL's transfer in flight.
        case joined
        /// The URL is already done in this run; serve the subscriber from `item`.
        case finished(FinishedItem)
        /// The URL had no transfer and `makeTransfer` chose not to start one (the output is served
        /// from disk); the subscriber was not added.
        case declined
    }

    /// What a `complete` did.
    enum Completion {
        /// The entry is gone: these subscribers get the result (first subscriber first).
        case done([Subscriber])
        /// Subscribers arrived whose output is not placed yet; place it and complete again.
        case morePending([Subscriber])
    }

    /// What a `cancel` did.
    enum Cancellation {
        /// The subscriber was not waiting (already completed or cancelled).
        case notFound
        /// The subscriber was removed; others still wait.
        case removed(Subscriber)
        /// The last subscriber was removed: the transfer has no caller left.
        case removedLast(Subscriber, Transfer)
    }

    /// Adds `subscriber` for `key`. The first subscriber of a URL gets a new transfer from
    /// `makeTransfer` (inside the barrier, so no second transfer can start for the URL), or none
    /// when it returns nil.
    func subscribe(key: String, _ subscriber: Subscriber, makeTransfer: () -> Transfer?) -> Subscription {
        queue.sync(flags: .barrier) {
            if let entry = entries[key] {
                entries[key]!.subscribers.append(subscriber)
                if subscriber.progress != nil { entry.transfer.progress.wanted.store(true, ordering: .relaxed) }
                return .joined
            }
            if let item = finished[key] { return .finished(item) }
            guard let transfer = makeTransfer() else { return .declined }
            entries[key] = Entry(transfer: transfer, subscribers: [subscriber])
            if subscriber.progress != nil { transfer.progress.wanted.store(true, ordering: .relaxed) }
            return .created(transfer)
        }
    }

    /// A snapshot of the subscribers of `key`'s transfer, for progress fan-out.
    func subscribers(of key: String, transferID: Int) -> [Subscriber] {
        queue.sync {
            guard let entry = entries[key], entry.transfer.id == transferID else { return [] }
            return entry.subscribers
        }
    }

    /// Ends `key`'s transfer: when `isPlaced` holds for every subscriber, removes the entry, records
    /// `item` (if any) for later subscribers of the URL, and returns the subscribers. Otherwise returns the
    /// unserved ones and keeps the entry, so a subscriber arriving meanwhile is never lost.
    func complete(key: String, transferID: Int, item: FinishedItem?, isPlaced: (Subscriber) -> Bool) -> Completion {
        queue.sync(flags: .barrier) {
            guard let entry = entries[key], entry.transfer.id == transferID else { return .done([]) }
            let unserved = entry.subscribers.filter { !isPlaced($0) }
            guard unserved.isEmpty else { return .morePending(unserved) }
            entries[key] = nil
            if let item, finished.updateValue(item, forKey: key) == nil {
                finishedOrder.append(key)
                if finishedOrder.count > finishedCapacity, let oldest = finishedOrder.popFirst() { finished[oldest] = nil }
            }
            return .done(entry.subscribers)
        }
    }

    /// Removes `key`'s entry if it still belongs to the (cancelled) transfer, without remembering
    /// anything, and returns the subscribers that were still waiting on it.
    func abandon(key: String, transferID: Int) -> [Subscriber] {
        queue.sync(flags: .barrier) {
            guard let entry = entries[key], entry.transfer.id == transferID else { return [] }
            entries[key] = nil
            return entry.subscribers
        }
    }

    /// Removes one subscriber of `key`.
    func cancel(key: String, subscriberID: Int) -> Cancellation {
        queue.sync(flags: .barrier) {
            guard var entry = entries[key], let index = entry.subscribers.firstIndex(where: { $0.id == subscriberID }) else {
                return .notFound
            }
            let subscriber = entry.subscribers.remove(at: index)
            if entry.subscribers.isEmpty {
                entries[key] = nil
                return .removedLast(subscriber, entry.transfer)
            }
            entries[key] = entry
            return .removed(subscriber)
        }
    }

    /// Removes every in-flight entry and returns their subscribers (for cancelling everything).
    func removeAll() -> [Subscriber] {
        queue.sync(flags: .barrier) {
            let subscribers = entries.values.flatMap(\.subscribers)
            entries.removeAll()
            return subscribers
        }
    }

    /// URLs with a transfer in flight (for tests and diagnostics).
    var inFlightCount: Int { queue.sync { entries.count } }
}

/// What became of a URL that is done in this run, so that later requests for it are served
/// without another download.
struct FinishedItem: Sendable {
    /// The result of the first subscriber.
    let result: DownloadResult
    /// A file holding the verified output (saved or found in place), to copy for other names.
    let outputPath: String?
    /// The URL has an entry in the cache index, which copies made from `outputPath` join.
    var isIndexed = false
    /// File names the index gave the URL before this run's response: they may be replaced.
    var replaceableNames: Set<String> = []
    /// The URL's indexed files when a 304 confirmed their body: a later caller whose name is one
    /// of them, still as indexed, keeps it (skipped) instead of getting a copy (saved).
    var confirmedFiles: [CacheEntry.File] = []
}
