import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The library's front door: download images concurrently and save them checked and atomically.
///
/// Like SDWebImageDownloader, requests for a URL already in flight only add callbacks (one
/// transfer per URL, results fanned out to every caller), and a URL finished earlier in the same
/// downloader's life is served from that result. Progress handlers run on the engine thread;
/// completion handlers on the output stage's delivery thread (results wait for the commit of
/// their index changes), never on the engine thread; each completion runs exactly once, never
/// inside `download`.
///
/// A facade over the stages: it names the output, asks the cache whether a request is needed,
/// and routes the caller through the registry to the engine, the decode stage and the output
/// stage. docs/ARCHITECTURE.md follows one URL through them.
public final class ImageDownloader: Sendable {
    public let configuration: DownloaderConfiguration
    let transport: DownloadTransport
    let registry = CallbackRegistry()
    let decodeStage: DecodeStage
    let output: OutputStage
    /// Where verified outputs go: a directory with its cache index, or their callers' hands.
    let sink: any OutputSink
    /// Where every temp file of the run is made: the output directory, with the kind it supports.
    let tempFiles: TempFileDirectory
    private let delivery: ResultDelivery
    /// The output's file system: once it is full (or below `--min-free`), no new transfer starts
    /// and every remaining item fails with class `disk-full`.
    public let diskSpace: DiskSpaceGuard
    /// `--robots`: each host's rules, fetched before its first request; nil without the option.
    private let robots: RobotsGate?
    /// Subscribers waiting in the robots gate: a token that cancels one removes it here, and the
    /// item is dropped when the gate lets it go.
    private let waitingForRobots = Mutex<Set<Int>>([])
    private let ids = IDCounter()
    private let stopped = Atomic<Bool>(false)
    /// What items get once `cancelAll` has run: `cancelled`, or the failure it was given.
    private let stopResult = Mutex<DownloadResult>(.cancelled)

    public convenience init(configuration: DownloaderConfiguration) throws(DownloadError) {
        try self.init(configuration: configuration, transport: try Engine(configuration: configuration))
    }

    /// `tempFileKind` forces the kind of temp file (tests of the named ones); nil lets the output
    /// directory decide.
    init(configuration: DownloaderConfiguration, transport: DownloadTransport,
         tempFileKind: TempFileDirectory.Kind? = nil) throws(DownloadError) {
        // A run killed with SIGKILL leaves its named temp files behind; the next run in the directory clears them.
        TempFile.removeStale(in: configuration.outputDirectory)
        self.configuration = configuration
        self.transport = transport
        tempFiles = TempFileDirectory(path: configuration.outputDirectory, kind: tempFileKind)
        let delivery = ResultDelivery()
        let diskSpace = DiskSpaceGuard(path: configuration.outputDirectory, minimumFree: configuration.minimumFreeSpace)
        self.delivery = delivery
        self.diskSpace = diskSpace
        switch configuration.outputs {
        case .placed:
            let index = DirectorySink.openIndex(configuration, diskSpace: diskSpace) { delivery.committed(through: $0) }
            output = OutputStage(registry: registry, delivery: delivery, index: index, diskSpace: diskSpace)
            let placer = OutputPlacer(directory: configuration.outputDirectory, tempFiles: tempFiles,
                                      existingFiles: configuration.existingFiles)
            sink = try DirectorySink(configuration: configuration, placer: placer, index: index, stage: output)
        case .handedOver:
            output = OutputStage(registry: registry, delivery: delivery, index: nil, diskSpace: diskSpace)
            sink = HandOverSink(configuration: configuration, stage: output)
        }
        decodeStage = DecodeStage(configuration: configuration, tempFiles: tempFiles, writesBodiesOut: sink.takesFiles)
        robots = configuration.obeysRobots ? RobotsGate(index: sink.index) { [transport, tempFiles, decodeStage, ids] origin, gate in
            Self.fetchRobots(of: origin, into: gate, transport: transport, tempFiles: tempFiles, decodeStage: decodeStage,
                             id: ids.next())
        } : nil
        // Weak: the guard belongs to the downloader.
        diskSpace.onFull { [weak self] error in self?.cancelAll(failingWith: error) }
    }

    /// Where an object store's requests run beside the downloads: the engine (nil with a mock transport).
    var storeTransport: StoreTransport? { transport as? StoreTransport }

    /// The output directory's cache index; nil when the configuration keeps none or it cannot be opened.
    var cacheIndex: CacheIndex? { sink.index }

    /// Requests `url`; `completion` receives the one result. Names are given in call order, so
    /// the same sequence of calls gives the same file names on every run.
    @discardableResult
    public func download(_ url: ParsedURL, options: DownloadOptions = DownloadOptions(),
                         progress: DownloadProgressHandler? = nil,
                         completion: @escaping DownloadCompletionHandler) -> DownloadToken {
        if stopped.load(ordering: .relaxed) {
            // No name is claimed for an item that will not run (after a full disk: no write either).
            output.cancel([Subscriber(id: takeID(), name: HandOverSink.noName, progress: progress, completion: completion,
                                      subscribedAt: DispatchTime.now())], with: stopResult.withLock { $0 })
            return DownloadToken(url: url, cancelAction: nil)
        }
        let named = Result { () throws(DownloadError) in try sink.name(for: url, explicitName: options.fileName) }
        let name = (try? named.get()) ?? HandOverSink.noName
        let subscriber = Subscriber(id: takeID(), name: name, progress: progress,
                                    completion: completion, subscribedAt: DispatchTime.now())
        if case .failure(let error) = named {
            output.cancel([subscriber], with: .failed(error))
            return DownloadToken(url: url, cancelAction: nil)
        }
        let key = url.normalized
        if let robots {
            // Items of a host whose robots.txt is not known yet wait in the gate, then go on from a
            // decode worker; a token cancels them only once they have gone on (`cancelAll` always does).
            waitingForRobots.withLock { _ = $0.insert(subscriber.id) }
            let verdict = robots.check(url) { [self] verdict in
                decodeStage.run { [self] in
                    proceed(url, key: key, name: name, options: options, subscriber: subscriber, verdict: verdict)
                    robots.resumed()
                }
            }
            guard let verdict else {
                return DownloadToken(url: url) { [self] in
                    if waitingForRobots.withLock({ $0.remove(subscriber.id) }) != nil {
                        output.cancel([subscriber])
                    } else {
                        cancel(key: key, subscriberID: subscriber.id)
                    }
                }
            }
            waitingForRobots.withLock { _ = $0.remove(subscriber.id) }
            switch verdict {
            case .allowed:
                break
            case .disallowed(let reason):
                decodeStage.run { [output] in output.skip(subscriber, reason: reason) }
                return DownloadToken(url: url, cancelAction: nil)
            case .failed(let error):
                output.cancel([subscriber], with: .failed(error))
                return DownloadToken(url: url, cancelAction: nil)
            }
        }
        return subscribe(url, key: key, name: name, options: options, subscriber: subscriber)
    }

    /// Goes on with an item that waited for its host's robots.txt.
    private func proceed(_ url: ParsedURL, key: String, name: OutputName, options: DownloadOptions, subscriber: Subscriber,
                         verdict: RobotsGate.Verdict) {
        // Cancelled by its token while it waited: its result is delivered already.
        guard waitingForRobots.withLock({ $0.remove(subscriber.id) }) != nil else { return }
        if stopped.load(ordering: .relaxed) { return output.cancel([subscriber], with: stopResult.withLock { $0 }) }
        switch verdict {
        case .allowed: subscribe(url, key: key, name: name, options: options, subscriber: subscriber)
        case .disallowed(let reason): output.skip(subscriber, reason: reason)
        case .failed(let error): output.cancel([subscriber], with: .failed(error))
        }
    }

    /// Plans the item's output, and joins, creates or declines the URL's transfer.
    @discardableResult
    private func subscribe(_ url: ParsedURL, key: String, name: OutputName, options: DownloadOptions,
                           subscriber: Subscriber) -> DownloadToken {
        // The cache plan (an index read and an lstat) is made before the registry's barrier and
        // used only if, inside it, the URL has no transfer and no result in this run yet: no second
        // transfer can start meanwhile. Planned inside, it held the barrier long enough that the
        // list reader's subscribes and the decode stage's completions kept colliding and parking
        // threads (20,000 tiny images: 4.8 -> 3.8 s, context switches 42,000 -> 23,000). A plan
        // that ends up unused (the URL joined a transfer or was served from this run's result)
        // costs only the read. State that changes in between is that of other URLs, or this
        // URL's result, which the barrier then finds.
        let plan = sink.plan(key: key, name: name)
        // Free space is looked at before a request is made, not before an item the index serves.
        if plan.needsRequest && !diskSpace.check() {
            // The guard's error is set before it counts as full; `stopResult` may still be on its way.
            output.cancel([subscriber], with: diskSpace.failure.map { .failed($0) } ?? stopResult.withLock { $0 })
            return DownloadToken(url: url, cancelAction: nil)
        }
        let subscription = registry.subscribe(key: key, subscriber) { () -> Transfer? in
            plan.needsRequest ? makeTransfer(for: url, key: key, priority: options.priority, plan: plan) : nil
        }
        switch subscription {
        case .created(let transfer):
            transport.submit(transfer)
        case .joined:
            break
        case .finished(let item):
            decodeStage.run { [sink] in sink.serveRepeat(subscriber, key: key, from: item) }
        case .declined:
            if plan.touchesFiles {
                decodeStage.run { [sink] in sink.serveWithoutRequest(subscriber, plan: plan) }
            } else {
                // A result with no file to look at (not in the cache) is made here: a decode
                // worker's wake-up for it cost as much as the rest of the item.
                sink.serveWithoutRequest(subscriber, plan: plan)
            }
            return DownloadToken(url: url, cancelAction: nil)
        }
        return DownloadToken(url: url) { [self] in cancel(key: key, subscriberID: subscriber.id) }
    }

    /// Downloads `url` and returns its result; cancelling the task cancels the request.
    /// Throws the item's `DownloadError` when it failed, `CancellationError` when the task was cancelled.
    public func image(at url: ParsedURL, options: DownloadOptions = DownloadOptions()) async throws -> DownloadResult {
        let token = TokenBox()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                token.set(download(url, options: options) { continuation.resume(returning: $0) })
            }
        } onCancel: {
            token.cancel()
        }
        switch result.status {
        case .saved, .skipped:
            return result
        case .cancelled:
            throw CancellationError()
        case .failed:
            throw result.error ?? DownloadError(.network, "failed")
        }
    }

    /// Cancels every request, in flight or pending, and refuses new ones: they complete as
    /// `cancelled`, or as failed with `error` when one is given (a run's deadline). Temp files are
    /// removed; nothing appears at a final path afterwards.
    public func cancelAll(failingWith error: DownloadError? = nil) {
        let result = error.map { DownloadResult.failed($0) } ?? .cancelled
        // The result first: a `download` that sees `stopped` must find it.
        stopResult.withLock { if !stopped.load(ordering: .relaxed) { $0 = result } }
        stopped.store(true, ordering: .relaxed)
        let subscribers = registry.removeAll()
        robots?.releaseAll(.allowed)
        transport.cancelAll()
        decodeStage.cancellation.cancel()
        output.cancel(subscribers, with: stopResult.withLock { $0 })
    }

    /// Waits for every submitted download to finish, then stops the engine, the decode stage, the
    /// index writer and the delivery thread, in the order the items flow.
    public func close() {
        // Items waiting for a robots.txt still need the engine: it is closed once they are on their way.
        robots?.waitUntilIdle()
        transport.close()
        decodeStage.close()
        cacheIndex?.close()
        delivery.close()
    }

    // MARK: - Internals

    private func takeID() -> Int { ids.next() }

    private func makeTransfer(for url: ParsedURL, key: String, priority: RequestPriority, plan: CachePlan) -> Transfer {
        let id = takeID()
        let digests = sink.digestsBody(plan) ? [.sha256] + configuration.bodyDigests.subtracting([.sha256]).sorted { $0.rawValue < $1.rawValue } : []
        let request = plan.request(for: url, priority: priority, digests: digests)
        let transfer = Transfer(id: id, request: request, directory: tempFiles, maxSize: configuration.maxSize) { [self] outcome in
            transferFinished(key: key, transferID: id, plan: plan, outcome)
        }
        transfer.progress.interval = UInt64(configuration.progressInterval * 1e9)
        transfer.progress.handler = { [registry] received, expected in
            for subscriber in registry.subscribers(of: key, transferID: id) {
                subscriber.progress?(received, expected)
            }
        }
        return transfer
    }

    /// Called once per transfer, on the engine thread (or the mock transport's): a body goes to
    /// the decode stage and then the output stage; a failure completes the URL's entry in the
    /// registry here and its results go to the output thread, so that a completion handler that
    /// blocks never holds up the engine loop.
    private func transferFinished(key: String, transferID: Int, plan: CachePlan, _ outcome: TransferOutcome) {
        switch outcome {
        case .fetched(let body, let response):
            decodeStage.run { [self] in
                sink.finishDownload(key: key, transferID: transferID, plan: plan, body: body, response: response,
                                    prepared: decodeStage.prepare(body))
                transport.release()
            }
        case .notModified(let response):
            decodeStage.run { [self] in
                sink.finishNotModified(key: key, transferID: transferID, plan: plan, response: response)
                transport.release()
            }
        case .failed(let error, let attempts, let httpStatus, let httpVersion):
            transport.release()
            // Only the registry's barrier runs here; the results go to the output thread.
            guard error.kind != .cancelled else {
                return output.abandon(key: key, transferID: transferID, with: stopResult.withLock { $0 })
            }
            output.fail(key: key, transferID: transferID,
                        .failed(error, attempts: attempts, httpStatus: httpStatus, httpVersion: httpVersion))
        }
    }

    private func cancel(key: String, subscriberID: Int) {
        switch registry.cancel(key: key, subscriberID: subscriberID) {
        case .notFound:
            return
        case .removed(let subscriber):
            output.cancel([subscriber])
        case .removedLast(let subscriber, let transfer):
            transport.cancel(transfer)
            output.cancel([subscriber])
        }
    }
}

/// Holds the token of an `image(at:)` call, which may be cancelled before the token exists.
private final class TokenBox: Sendable {
    private let state = Mutex<(token: DownloadToken?, cancelled: Bool)>((nil, false))

    func set(_ token: DownloadToken) {
        let cancelNow = state.withLock { state in
            state.token = token
            return state.cancelled
        }
        if cancelNow { token.cancel() }
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.token
        }?.cancel()
    }
}

extension ImageDownloader {
    /// Fetches `origin`'s robots.txt through the engine (first in line, its first 500 KiB) and
    /// hands the answer to `gate`.
    static func fetchRobots(of origin: String, into gate: RobotsGate, transport: DownloadTransport, tempFiles: TempFileDirectory,
                            decodeStage: DecodeStage, id: Int) {
        guard let url = try? ParsedURL(origin + "/robots.txt") else {
            return gate.learn(origin, .failed(DownloadError(.invalidInput, "no robots.txt URL for \(origin)"), redirectFailure: false))
        }
        var request = TransferRequest(url: url, priority: .high)
        request.truncatesBody = true
        // A robots.txt often says X-Robots-Tag: noindex, to stay out of search results; it is read all the same.
        request.checksOptOut = false
        let transfer = Transfer(id: id, request: request, directory: tempFiles, maxSize: Int64(RobotsRules.maxBytes)) { outcome in
            switch outcome {
            case .fetched(let body, let response):
                decodeStage.run {
                    let bytes = RobotsGate.contents(of: body.tempFile)
                    transport.release()
                    gate.learn(origin, .answered(status: response.status, body: bytes, headers: ResponseCacheHeaders(fields: response.headers),
                                                 requestTime: response.requestTime, responseTime: response.responseTime))
                }
            case .notModified(let response):
                transport.release()
                gate.learn(origin, .answered(status: response.status, body: [], headers: ResponseCacheHeaders(),
                                             requestTime: response.requestTime, responseTime: response.responseTime))
            case .failed(let error, _, let status, _):
                transport.release()
                if error.kind == .cancelled {
                    gate.learn(origin, .cancelled)
                } else if error.kind == .http, let status {
                    gate.learn(origin, .answered(status: status, body: [], headers: ResponseCacheHeaders(), requestTime: 0, responseTime: 0))
                } else {
                    gate.learn(origin, .failed(error, redirectFailure: error.kind == .redirect))
                }
            }
        }
        transport.submit(transfer)
    }
}
