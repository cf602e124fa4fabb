import Dispatch
import Glibc

/// The output stage: puts every output under its callers' names, keeps the cache index in step,
/// and delivers every result on its own executor.
///
/// One primitive, `put`, places every output: a downloaded body (the temp file itself for its
/// first name, a copy for each other name), a copy of this run's first file for a repeated URL,
/// and a copy of an indexed file after a 304 or straight from the index. It applies the overwrite
/// rule (`OutputPlacer`), leaves a file that already holds the output untouched, and records what
/// it placed in the index (`CacheRecorder`).
///
/// Placing runs on the thread that calls in (a decode worker). Results are delivered on the
/// stage's own thread (`ResultDelivery`), each once the index has committed what its placement
/// recorded. A URL's callers are completed through the registry, so that a caller who joins
/// while the output is being placed gets a file too.
final class OutputStage: Sendable {
    let configuration: DownloaderConfiguration
    let placer: OutputPlacer
    let index: CacheIndex?
    private let registry: CallbackRegistry
    private let delivery: ResultDelivery
    /// Hears of every `disk-full` failure, and looks at free space after each file placed.
    private let diskSpace: DiskSpaceGuard

    init(configuration: DownloaderConfiguration, placer: OutputPlacer, index: CacheIndex?, registry: CallbackRegistry,
         delivery: ResultDelivery, diskSpace: DiskSpaceGuard) {
        self.configuration = configuration
        self.diskSpace = diskSpace
        self.placer = placer
        self.index = index
        self.registry = registry
        self.delivery = delivery
    }

    // MARK: - The primitive

    /// What `put` did.
    enum Placed {
        /// The output is now the file at the name.
        case saved
        /// A file that may not be replaced was at the name; it is left untouched.
        case existed
        /// The file at the name already held the output; it is left untouched.
        case unchanged
    }

    /// Puts `source` under `name` unless the file there already holds it (`isThere`), replacing
    /// a file there only as `OutputPlacer.mayReplace` allows (`replaceable`: the names the URL's
    /// index entry gave it), and records the file with `recorder`.
    func put(_ source: OutputPlacer.Source, as name: String, replaceable: Set<String>, isThere: Bool = false,
             recorder: CacheRecorder?) throws(DownloadError) -> Placed {
        if isThere {
            recorder?.record(name, stamp: placer.stamp(of: name), wasThere: true)
            return .unchanged
        }
        guard try placer.place(source, as: name, indexedNames: replaceable) == .saved else { return .existed }
        recorder?.record(name, stamp: placer.stamp(of: name), wasThere: false)
        return .saved
    }

    /// `base` completed with what `put` did under `name`: saved, or skipped with the file that is
    /// there; when it failed, `failure(error)` (by default `base` with the error).
    private func result(_ base: DownloadResult, name: String, failure: ((DownloadError) -> DownloadResult)? = nil,
                        _ put: () throws(DownloadError) -> Placed) -> DownloadResult {
        var result = base
        do {
            result.status = try put() == .saved ? .saved : .skipped
            result.paths = [placer.path(of: name)]
            result.error = nil
        } catch {
            if let failure { return failure(error) }
            result.status = .failed
            result.paths = []
            result.error = error
        }
        return result
    }

    /// The file name an output of `format` gets under `name`: the format's extension, or the pixel format's.
    func fileName(_ name: OutputName, format: ImageFormat) -> String {
        switch configuration.saveAs {
        case .original: name.fileName(for: format)
        case .pixels(let pixels): name.fileName(extension: pixels.fileExtension, accepting: [pixels.fileExtension])
        }
    }

    // MARK: - A downloaded body

    /// A transfer's body, checked by the decode stage: placed under every caller's name, or the
    /// decode stage's error for every caller.
    func finishDownload(key: String, transferID: Int, context: CacheContext, body: ReceivedBody, response: ResponseMetadata,
                        prepared: Result<PreparedOutput, DownloadError>) {
        var base = DownloadResult(status: .failed)
        base.httpStatus = response.status
        base.httpVersion = response.httpVersion
        base.bytes = body.bytes
        base.attempts = response.attempts
        let output: PreparedOutput
        switch prepared {
        case .failure(let error):
            base.error = error
            fail(key: key, transferID: transferID, base)
            return
        case .success(let prepared):
            output = prepared
        }
        base.format = output.format
        base.image = output.image
        base.cache = .downloaded
        if configuration.handsOverOutputs { return handOver(key: key, transferID: transferID, output: output, body: body, response: response, base) }
        if configuration.saveAs == .original { base.contentHash = body.sha256 }
        let kind = CacheEntry.outputKind(for: configuration)
        let headers = ResponseCacheHeaders(fields: response.headers)
        let newEntry = headers.directives.noStore ? nil
            : CacheEntry(url: key, finalURL: response.finalURL, kind: kind, format: output.format, image: output.image,
                         headers: headers,
                         freshness: CacheFreshness(headers: headers, requestTime: response.requestTime,
                                                   responseTime: response.responseTime),
                         bodySize: body.bytes, contentHash: body.sha256 ?? "", files: [])
        let recorder = CacheRecorder(index: index, key: key, newEntry: newEntry)
        // An indexed file that already holds this very body stays untouched (unless reloading,
        // which rewrites every file it downloads).
        let previous = context.entry.flatMap { entry -> CacheEntry? in
            guard configuration.cachePolicy == .protocol, entry.kind == kind, entry.bodySize == body.bytes,
                  let hash = body.sha256, storedHash(of: entry) == hash else { return nil }
            return entry
        }
        let replaceable = context.entry?.fileNames ?? []
        var linked = false
        placeForEveryCaller(key: key, transferID: transferID, format: output.format, failure: base,
                            isIndexed: newEntry != nil, replaceable: replaceable) { _, name in
            let isThere = previous.map { placer.holds($0, as: name) } ?? false
            // The first name gets the temp file itself; later names a copy of it.
            let source: OutputPlacer.Source = linked ? .copy(of: output.file) : .body(output.file)
            let placed = result(base, name: name) { () throws(DownloadError) in
                try put(source, as: name, replaceable: replaceable, isThere: isThere, recorder: recorder)
            }
            if placed.status == .saved { linked = true }
            return placed
        }
    }

    /// Hands the output to every caller of the transfer (`DownloaderConfiguration.handsOverOutputs`):
    /// one shared `OutputFile`, the body's hash and its Last-Modified. Nothing is placed or indexed,
    /// and nothing is kept for a later caller of the URL.
    private func handOver(key: String, transferID: Int, output: PreparedOutput, body: ReceivedBody, response: ResponseMetadata,
                          _ base: DownloadResult) {
        var result = base
        result.bodySHA256 = body.sha256
        if configuration.saveAs == .original { result.contentHash = body.sha256 }
        result.lastModified = ResponseCacheHeaders(fields: response.headers).lastModified
            .flatMap(HTTPDate.parse).map { Int64($0) }
        do {
            result.handedOver = try OutputFile(output.file)
            result.status = .saved
        } catch {
            result.error = error
        }
        guard case .done(let subscribers) = registry.complete(key: key, transferID: transferID, item: nil,
                                                              isPlaced: { _ in true }) else { return }
        deliver(subscribers.map { ($0, result) }, afterIndexChanges: false)
        // The body is in a temp file on the output's file system: see what room is left.
        diskSpace.check()
    }

    /// The SHA-256 of the body `entry` stored: as recorded, or, for original bytes recorded
    /// without one (a first download takes none), the hash of an indexed file that is still
    /// as it was saved. nil when it cannot be known.
    private func storedHash(of entry: CacheEntry) -> String? {
        guard entry.contentHash.isEmpty else { return entry.contentHash }
        guard configuration.saveAs == .original,
              let file = entry.files.first(where: { $0.matches(placer.stamp(of: $0.name)) }) else { return nil }
        let path = placer.path(of: file.name)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return try? SHA256.hexDigest(ofFile: fd, path: path)
    }

    /// A 304 confirmed `context.entry`: the entry takes the response's headers, and every caller
    /// of the URL is served from its files.
    func finishNotModified(key: String, transferID: Int, context: CacheContext, response: ResponseMetadata) {
        guard var entry = context.entry, let source = context.source else {
            // Unreachable (only a conditional request is answered 304), but never leave callers waiting.
            let failure = DownloadResult.failed(DownloadError(.http, "HTTP 304 to a request that was not conditional"),
                                                attempts: response.attempts, httpStatus: 304)
            fail(key: key, transferID: transferID, failure)
            return
        }
        entry.headers = entry.headers.updated(with: ResponseCacheHeaders(fields: response.headers))
        entry.freshness = CacheFreshness(headers: entry.headers, requestTime: response.requestTime,
                                         responseTime: response.responseTime)
        index?.refresh(url: key, headers: entry.headers, freshness: entry.freshness)
        var failure = DownloadResult.failed(DownloadError(.filesystem, "no cached file"), attempts: response.attempts,
                                            httpStatus: 304, httpVersion: response.httpVersion)
        failure.format = entry.format
        placeForEveryCaller(key: key, transferID: transferID, format: entry.format, failure: failure, isIndexed: true,
                            replaceable: entry.fileNames, confirmed: entry.files) { name, _ in
            var result = fromIndex(name, entry: entry, source: source, outcome: .revalidated, attempts: response.attempts)
            result.httpStatus = 304
            result.httpVersion = response.httpVersion
            return result
        }
    }

    /// Places the output under the file name of every caller of `key` (callers that join meanwhile
    /// too), then delivers the results once the index holds what was recorded. Only an output
    /// placed somewhere can serve later requests of the URL; if every placement failed, a later
    /// request fetches it again rather than inherit another name's error.
    private func placeForEveryCaller(key: String, transferID: Int, format: ImageFormat, failure: DownloadResult, isIndexed: Bool,
                                     replaceable: Set<String>, confirmed: [CacheEntry.File] = [],
                                     place: (OutputName, String) -> DownloadResult) {
        var placed: [String: DownloadResult] = [:]
        var first: DownloadResult?
        func result(for subscriber: Subscriber) -> DownloadResult? { placed[fileName(subscriber.name, format: format)] }
        func placeEach(_ subscribers: [Subscriber]) {
            for subscriber in subscribers where result(for: subscriber) == nil {
                let name = fileName(subscriber.name, format: format)
                let outcome = place(subscriber.name, name)
                placed[name] = outcome
                if first == nil, outcome.status != .failed { first = outcome }
            }
        }
        // The callers known now are read without a barrier; `complete` (a barrier) then finds
        // any who joined meanwhile.
        placeEach(registry.subscribers(of: key, transferID: transferID))
        while true {
            let item = first.map {
                FinishedItem(result: $0, outputPath: $0.paths.first, isIndexed: isIndexed, replaceableNames: replaceable,
                             confirmedFiles: confirmed)
            }
            switch registry.complete(key: key, transferID: transferID, item: item, isPlaced: { result(for: $0) != nil }) {
            case .done(let subscribers):
                deliver(subscribers.map { ($0, result(for: $0) ?? failure) }, afterIndexChanges: true)
                // Free space is looked at once the callers have their results: a trip here
                // cancels what is still to come, never the item just placed.
                diskSpace.check()
                return
            case .morePending(let subscribers):
                placeEach(subscribers)
            }
        }
    }

    // MARK: - Outputs that need no transfer

    /// Serves a caller of a URL finished earlier in this run, from that result: a copy of its file
    /// under this caller's name, or the same failure.
    func serveRepeat(_ subscriber: Subscriber, key: String, from item: FinishedItem) {
        guard let source = item.outputPath, let format = item.result.format else {
            return deliver([(subscriber, item.result)], afterIndexChanges: false, coalesced: true)
        }
        let name = fileName(subscriber.name, format: format)
        guard placer.path(of: name) != source else {
            // The same name as the first caller's (hash naming, a repeated out=): the same result.
            return deliver([(subscriber, item.result)], afterIndexChanges: item.isIndexed, coalesced: true)
        }
        let recorder = item.isIndexed ? CacheRecorder(index: index, joining: key) : nil
        let first = item.result
        let failure = { (error: DownloadError) in
            DownloadResult.failed(error, attempts: first.attempts, httpStatus: first.httpStatus, httpVersion: first.httpVersion)
        }
        let isThere = item.confirmedFiles.contains { $0.name == name && $0.matches(placer.stamp(of: name)) }
        let served = result(first, name: name, failure: failure) { () throws(DownloadError) in
            try put(.file(at: source), as: name, replaceable: item.replaceableNames, isThere: isThere, recorder: recorder)
        }
        // The first caller's entry may still wait for its commit: so does this result.
        deliver([(subscriber, served)], afterIndexChanges: item.isIndexed, coalesced: true)
    }

    /// Serves a caller whose output needs no request (`CachePlan.keepExisting`, `.serve`,
    /// `.missing`, `.mustRevalidate`).
    func serveWithoutRequest(_ subscriber: Subscriber, plan: CachePlan) {
        let result: DownloadResult
        switch plan {
        case .keepExisting(let existing):
            result = DownloadResult(status: .skipped, paths: [placer.path(of: existing)])
        case .serve(let entry, let source, let outcome):
            result = fromIndex(subscriber.name, entry: entry, source: source, outcome: outcome, attempts: 0)
        case .missing:
            result = .failed(DownloadError(.notCached, "not in the cache index of \(configuration.indexDirectory ?? configuration.outputDirectory) "
                + "(--cache-policy only-if-cached makes no requests; run without it to download)"))
        case .mustRevalidate:
            result = .failed(DownloadError(.notCached, "stale in the cache index, and the server requires revalidation "
                + "(no-cache or must-revalidate); --cache-policy only-if-cached makes no requests"))
        case .revalidate, .download:
            preconditionFailure("a plan that needs a request was served without one")
        }
        deliver([(subscriber, result)], afterIndexChanges: result.status == .saved)
    }

    /// The output `name` of an indexed body: the indexed file itself when it is intact, else a
    /// copy of `source` placed under the name (and indexed).
    private func fromIndex(_ name: OutputName, entry: CacheEntry, source: String, outcome: CacheOutcome,
                           attempts: Int) -> DownloadResult {
        let wanted = fileName(name, format: entry.format)
        var base = DownloadResult(status: .skipped)
        base.format = entry.format
        base.image = entry.image
        base.cache = outcome
        base.reusedBytes = entry.bodySize
        // Entries of another output kind are never reused: the kind is this configuration's.
        if configuration.saveAs == .original, !entry.contentHash.isEmpty { base.contentHash = entry.contentHash }
        base.attempts = attempts
        let failure = { (error: DownloadError) in
            var failed = DownloadResult.failed(error, attempts: attempts)
            failed.format = entry.format
            return failed
        }
        return result(base, name: wanted, failure: failure) { () throws(DownloadError) in
            try put(.file(at: placer.path(of: source)), as: wanted, replaceable: entry.fileNames,
                    isThere: placer.holds(entry, as: wanted), recorder: CacheRecorder(index: index, joining: entry.url))
        }
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
    private func deliver(_ results: [(Subscriber, DownloadResult)], afterIndexChanges: Bool, coalesced: Bool = false,
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
