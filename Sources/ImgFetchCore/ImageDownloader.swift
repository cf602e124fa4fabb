import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The library's front door: download images concurrently and save them checked and atomically.
///
/// Like SDWebImageDownloader, requests for a URL already in flight only add callbacks (one
/// transfer per URL, results fanned out to every caller), and a URL finished earlier in the same
/// downloader's life is served from that result. Progress handlers run on the engine thread;
/// completion handlers on a decode-stage thread or the cache index's writer thread (results wait
/// for the commit of their index changes), never on the engine thread; each completion runs
/// exactly once, never inside `download`.
/// docs/ARCHITECTURE.md follows one URL through these threads.
public final class ImageDownloader: Sendable {
    public let configuration: DownloaderConfiguration
    let transport: DownloadTransport
    let registry = CallbackRegistry()
    let decodeStage: DecodeStage
    /// Where every temp file of the run is made: the output directory, with the kind it supports.
    let tempFiles: TempFileDirectory
    /// Puts every output under its names.
    let placer: OutputPlacer
    /// The output directory's cache index; nil when the configuration keeps none or it cannot be opened.
    let cacheIndex: CacheIndex?
    private let namer: Mutex<FileNamer>
    private let nextID = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    public convenience init(configuration: DownloaderConfiguration) throws(DownloadError) {
        self.init(configuration: configuration, transport: try Engine(configuration: configuration))
    }

    /// `tempFileKind` forces the kind of temp file (tests of the named ones); nil lets the output
    /// directory decide.
    init(configuration: DownloaderConfiguration, transport: DownloadTransport, tempFileKind: TempFileDirectory.Kind? = nil) {
        // A run killed with SIGKILL leaves its named temp files behind; the next run in the directory clears them.
        TempFile.removeStale(in: configuration.outputDirectory)
        self.configuration = configuration
        self.transport = transport
        tempFiles = TempFileDirectory(path: configuration.outputDirectory, kind: tempFileKind)
        decodeStage = DecodeStage(configuration: configuration, tempFiles: tempFiles)
        placer = OutputPlacer(directory: configuration.outputDirectory, tempFiles: tempFiles,
                              existingFiles: configuration.existingFiles)
        namer = Mutex(FileNamer(scheme: configuration.naming))
        cacheIndex = Self.openCacheIndex(configuration)
    }

    /// Requests `url`; `completion` receives the one result. Names are given in call order, so
    /// the same sequence of calls gives the same file names on every run.
    @discardableResult
    public func download(_ url: ParsedURL, options: DownloadOptions = DownloadOptions(),
                         progress: DownloadProgressHandler? = nil,
                         completion: @escaping DownloadCompletionHandler) -> DownloadToken {
        let name = namer.withLock { $0.name(for: url, explicitName: options.fileName) }
        let subscriber = Subscriber(id: takeID(), name: name, progress: progress, completion: completion,
                                    subscribedAt: DispatchTime.now())
        if stopped.load(ordering: .relaxed) {
            decodeStage.run { Self.deliver(DownloadResult(status: .cancelled, error: Self.cancelled), to: subscriber) }
            return DownloadToken(url: url, cancelAction: nil)
        }
        let key = url.normalized
        // The cache plan (an index read and an lstat) is made before the registry's barrier and
        // used only if, inside it, the URL has no transfer and no result in this run yet: no second
        // transfer can start meanwhile. Planned inside, it held the barrier long enough that the
        // list reader's subscribes and the decode stage's completions kept colliding and parking
        // threads (20,000 tiny images: 4.8 -> 3.8 s, context switches 42,000 -> 23,000). A plan
        // that ends up unused (the URL joined a transfer or was served from this run's result)
        // costs only the read. State that changes in between is that of other URLs, or this
        // URL's result, which the barrier then finds.
        let plan = cachePlan(key: key, name: name)
        var servedFromDisk: CachePlan?
        let subscription = registry.subscribe(key: key, subscriber) { () -> Transfer? in
            switch plan {
            case .revalidate(let entry, let source):
                return makeTransfer(for: url, key: key, priority: options.priority, context: CacheContext(entry: entry, source: source))
            case .download(let owner):
                return makeTransfer(for: url, key: key, priority: options.priority, context: CacheContext(entry: owner, source: nil))
            case .keepExisting, .serve, .missing, .mustRevalidate:
                servedFromDisk = plan
                return nil
            }
        }
        switch subscription {
        case .created(let transfer):
            transport.submit(transfer)
        case .joined:
            break
        case .finished(let item):
            decodeStage.run { [self] in serve(subscriber, key: key, from: item) }
        case .declined:
            let plan = servedFromDisk!
            decodeStage.run { [self] in
                let (result, changedIndex) = serveWithoutNetwork(plan, key: key, name: subscriber.name)
                guard changedIndex else { return Self.deliver(result, to: subscriber) }
                afterIndexCommit { Self.deliver(result, to: subscriber) }
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

    /// Cancels every request, in flight or pending, and refuses new ones (they complete as
    /// `cancelled`). Temp files are removed; nothing appears at a final path afterwards.
    public func cancelAll() {
        stopped.store(true, ordering: .relaxed)
        let subscribers = registry.removeAll()
        transport.cancelAll()
        for subscriber in subscribers {
            decodeStage.run { Self.deliver(DownloadResult(status: .cancelled, error: Self.cancelled), to: subscriber) }
        }
    }

    /// Waits for every submitted download to finish, then stops the engine and the decode stage.
    public func close() {
        transport.close()
        decodeStage.close()
        cacheIndex?.close()
    }

    // MARK: - Internals

    private func takeID() -> Int { nextID.add(1, ordering: .relaxed).newValue }

    private func makeTransfer(for url: ParsedURL, key: String, priority: RequestPriority, context: CacheContext) -> Transfer {
        let id = takeID()
        let validators = context.source == nil ? [] : context.entry?.headers.validators ?? []
        let transfer = Transfer(id: id, url: url, directory: tempFiles, maxSize: configuration.maxSize,
                                priority: priority, validators: validators, validatorTarget: context.entry?.finalURL,
                                hashesBody: cacheIndex != nil) { [self] outcome in
            transferFinished(key: key, transferID: id, context: context, outcome)
        }
        transfer.progressInterval = UInt64(configuration.progressInterval * 1e9)
        transfer.onProgress = { [registry] received, expected in
            for subscriber in registry.subscribers(of: key, transferID: id) {
                subscriber.progress?(received, expected)
            }
        }
        return transfer
    }

    private func cancel(key: String, subscriberID: Int) {
        switch registry.cancel(key: key, subscriberID: subscriberID) {
        case .notFound:
            return
        case .removed(let subscriber):
            decodeStage.run { Self.deliver(DownloadResult(status: .cancelled, error: Self.cancelled), to: subscriber) }
        case .removedLast(let subscriber, let transfer):
            transport.cancel(transfer)
            decodeStage.run { Self.deliver(DownloadResult(status: .cancelled, error: Self.cancelled), to: subscriber) }
        }
    }

    static let cancelled = DownloadError(.cancelled, "cancelled")

    /// The file name an output of `format` gets under `name`: the format's extension, or the pixel format's.
    func fileName(_ name: OutputName, format: ImageFormat) -> String {
        switch configuration.saveAs {
        case .original: name.fileName(for: format)
        case .pixels(let pixels): name.fileName(extension: pixels.fileExtension, accepting: [pixels.fileExtension])
        }
    }

    static func deliver(_ result: DownloadResult, to subscriber: Subscriber, coalesced: Bool = false) {
        var result = result
        result.coalesced = coalesced
        result.duration = Double(DispatchTime.now().uptimeNanoseconds - subscriber.subscribedAt.uptimeNanoseconds) / 1e9
        subscriber.completion(result)
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
