import Dispatch

/// The output stage: completes a transfer's callers through the registry and delivers every
/// result on its own executor (`ResultDelivery`), each once the index has committed what its
/// output recorded. What is done with an output before that is the sink's (`OutputSink`).
///
/// Completing runs on the thread that calls in (a decode worker, or the engine for failures and
/// cancellations); results are delivered on the stage's own thread. A URL's callers are
/// completed through the registry, so that a caller who joins while the output is being taken
/// gets a result too.
final class OutputStage: Sendable {
    let registry: CallbackRegistry
    private let delivery: ResultDelivery
    /// The index whose commits results wait for; nil when the sink keeps none.
    private let index: CacheIndex?
    /// Hears of every `disk-full` failure, and looks at free space after each output taken.
    let diskSpace: DiskSpaceGuard

    init(registry: CallbackRegistry, delivery: ResultDelivery, index: CacheIndex?, diskSpace: DiskSpaceGuard) {
        self.registry = registry
        self.delivery = delivery
        self.index = index
        self.diskSpace = diskSpace
    }

    // MARK: - Failures and cancellations

    /// Completes `key`'s transfer with `failure` for every caller; later callers of the URL in
    /// this run get it too.
    func fail(key: String, transferID: Int, _ failure: DownloadResult) {
        let item = FinishedItem(result: failure, outputPath: nil)
        guard case .done(let subscribers) = registry.complete(key: key, transferID: transferID, item: item,
                                                              isPlaced: { _ in true }) else { return }
        deliver(subscribers.map { ($0, failure) }, afterIndexChanges: false)
    }

    /// `key`'s transfer was cancelled: its callers got `cancelled` when they withdrew, but one that
    /// subscribed while `cancelAll()` ran may still be waiting on it and must hear it too (every
    /// one after the first shared its transfer).
    func abandon(key: String, transferID: Int, with result: DownloadResult = .cancelled) {
        let waiting = registry.abandon(key: key, transferID: transferID)
        deliver(waiting.map { ($0, result) }, afterIndexChanges: false)
    }

    /// Reports `subscriber`'s item as skipped without a request, for `reason` (robots.txt).
    func skip(_ subscriber: Subscriber, reason: String) {
        var result = DownloadResult(status: .skipped)
        result.skipReason = reason
        deliver([(subscriber, result)], afterIndexChanges: false, sharedTransfer: false)
    }

    /// Delivers `result` (`cancelled` unless the run stopped for another reason, such as its
    /// deadline) to `subscribers`, each on its own (they are callers of different URLs, or
    /// withdrew one by one).
    func cancel(_ subscribers: [Subscriber], with result: DownloadResult = .cancelled) {
        guard !subscribers.isEmpty else { return }
        deliver(subscribers.map { ($0, result) }, afterIndexChanges: false, sharedTransfer: false)
    }

    // MARK: - Delivery

    /// Hands each result to its caller on the delivery thread, after the index has committed the
    /// changes made so far when `afterIndexChanges`. With `sharedTransfer`, the callers are those
    /// of one transfer, and every one after the first shared the first one's (`coalesced`); with
    /// `coalesced`, every caller did.
    func deliver(_ results: [(Subscriber, DownloadResult)], afterIndexChanges: Bool, coalesced: Bool = false,
                         sharedTransfer: Bool = true) {
        guard !results.isEmpty else { return }
        // A full disk stops the run here, on the thread that met it, before the result is out.
        for (_, result) in results { diskSpace.note(result.error) }
        let ticket = afterIndexChanges ? index?.commitTicket ?? 0 : 0
        delivery.submit(after: ticket) {
            for (position, (subscriber, result)) in results.enumerated() {
                Self.deliver(result, to: subscriber, coalesced: coalesced || sharedTransfer && position > 0)
            }
        }
    }

    private static func deliver(_ result: DownloadResult, to subscriber: Subscriber, coalesced: Bool) {
        var result = result
        result.coalesced = coalesced
        result.duration = Double(DispatchTime.now().uptimeNanoseconds - subscriber.subscribedAt.uptimeNanoseconds) / 1e9
        subscriber.completion(result)
    }
}
