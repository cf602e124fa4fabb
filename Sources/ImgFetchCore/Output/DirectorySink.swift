import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The sink of `-o DIR`: every output placed under its callers' names in the output directory,
/// and the cache index kept in step (`DownloaderConfiguration.outputs` `.placed`).
///
/// One primitive, `put`, places every output: a downloaded body (the temp file itself for its
/// first name, a copy for each other name), a copy of this run's first file for a repeated URL,
/// and a copy of an indexed file after a 304 or straight from the index. It applies the overwrite
/// rule (`OutputPlacer`), leaves a file that already holds the output untouched, and records what
/// it placed in the index (`CacheRecorder`). Before a request, the sink gives the item its name
/// (`FileNamer`, its claims on disk) and asks the index whether a request is needed (`CachePlanner`).
///
/// Placing runs on the thread that calls in (a decode worker); the results go out through the
/// output stage.
final class DirectorySink: OutputSink {
    let configuration: DownloaderConfiguration
    let placer: OutputPlacer
    let index: CacheIndex?
    let stage: OutputStage
    private let planner: CachePlanner
    /// Names and their claims.
    private let namer: Mutex<FileNamer>

    init(configuration: DownloaderConfiguration, placer: OutputPlacer, index: CacheIndex?, stage: OutputStage)
        throws(DownloadError) {
        self.configuration = configuration
        self.placer = placer
        self.index = index
        self.stage = stage
        planner = CachePlanner(policy: configuration.cachePolicy, kind: CacheEntry.outputKind(for: configuration),
                               verifies: configuration.verifyImages, existingFiles: configuration.existingFiles,
                               fileStamp: { placer.stamp(of: $0) }, freshSince: configuration.freshSince)
        // The claims go beside the index (on local scratch under --work-dir), in an unnamed file.
        let indexRoot = configuration.indexDirectory ?? configuration.outputDirectory
        let claimsDirectory = index == nil ? configuration.outputDirectory : OutputPaths.join(indexRoot, CacheIndex.folderName)
        namer = Mutex(try FileNamer(scheme: configuration.naming, claimsDirectory: claimsDirectory))
    }

    var takesFiles: Bool { true }

    /// Opens the output directory's index, unless the configuration keeps none; a failure to open
    /// it is a warning, and the run goes on without one. `onCommitted` hears of every commit.
    static func openIndex(_ configuration: DownloaderConfiguration, diskSpace: DiskSpaceGuard,
                          onCommitted: @escaping @Sendable (UInt64) -> Void) -> CacheIndex? {
        guard configuration.keepsCacheIndex else { return nil }
        let warn: @Sendable (String) -> Void = configuration.onWarning ?? { _ in }
        do {
            return try CacheIndex(directory: configuration.indexDirectory ?? configuration.outputDirectory, warn: warn,
                                  diskSpace: diskSpace, onCommitted: onCommitted)
        } catch {
            warn("\(error.message); continuing without the cache (every item is downloaded)")
            return nil
        }
    }

    // MARK: - Before a request

    func name(for url: ParsedURL, explicitName: String?) throws(DownloadError) -> OutputName {
        try namer.withLock { namer throws(DownloadError) in try namer.name(for: url, explicitName: explicitName) }
    }

    /// The plan for one output of `key`: serve it from disk, revalidate, or download.
    func plan(key: String, name: OutputName) -> CachePlan {
        let possibleNames: [String]
        switch configuration.saveAs {
        case .original: possibleNames = name.possibleFileNames
        case .pixels: possibleNames = [fileName(name, format: .jpeg)]
        }
        return planner.plan(entry: index?.entry(for: key), wantedName: { fileName(name, format: $0) },
                            possibleNames: possibleNames, now: Date().timeIntervalSince1970)
    }

    /// Whether a transfer takes its body's SHA-256: where the index compares it with the body it
    /// stored (a URL it knows; every decoded output, whose file is not the body), or when asked.
    /// A first download of original bytes is not hashed: if the URL is downloaded again, the
    /// file itself is hashed then (`storedHash`). That was 8% of the CPU of saving small JPEGs
    /// with `--no-decode`.
    func digestsBody(_ plan: CachePlan) -> Bool {
        configuration.hashesEveryBody || index != nil && (plan.entry != nil || configuration.saveAs != .original)
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
            // Converted pixels are not the body: what was written is the file's size (one lstat,
            // only for converted outputs).
            if configuration.saveAs != .original { result.outputBytes = placer.stamp(of: name)?.size }
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

    /// Places a verified download under every caller's name, and records it in the index.
    func take(_ output: PreparedOutput, key: String, transferID: Int, plan: CachePlan, body: ReceivedBody,
              response: ResponseMetadata, base: DownloadResult) {
        var base = base
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
        let previous = plan.entry.flatMap { entry -> CacheEntry? in
            guard configuration.cachePolicy == .protocol, entry.kind == kind, entry.bodySize == body.bytes,
                  let hash = body.sha256, storedHash(of: entry) == hash else { return nil }
            return entry
        }
        let replaceable = plan.entry?.fileNames ?? []
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

    /// A 304 confirmed `plan.entry`: the entry takes the response's headers, and every caller
    /// of the URL is served from its files.
    func finishNotModified(key: String, transferID: Int, plan: CachePlan, response: ResponseMetadata) {
        guard var entry = plan.entry, let source = plan.source else {
            // Unreachable (only a conditional request is answered 304), but never leave callers waiting.
            let failure = DownloadResult.failed(DownloadError(.http, "HTTP 304 to a request that was not conditional"),
                                                attempts: response.attempts, httpStatus: 304)
            stage.fail(key: key, transferID: transferID, failure)
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
        placeEach(stage.registry.subscribers(of: key, transferID: transferID))
        while true {
            let item = first.map {
                FinishedItem(result: $0, outputPath: $0.paths.first, isIndexed: isIndexed, replaceableNames: replaceable,
                             confirmedFiles: confirmed)
            }
            switch stage.registry.complete(key: key, transferID: transferID, item: item, isPlaced: { result(for: $0) != nil }) {
            case .done(let subscribers):
                stage.deliver(subscribers.map { ($0, result(for: $0) ?? failure) }, afterIndexChanges: true)
                // Free space is looked at once the callers have their results: a trip here
                // cancels what is still to come, never the item just placed.
                stage.diskSpace.check()
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
            return stage.deliver([(subscriber, item.result)], afterIndexChanges: false, coalesced: true)
        }
        let name = fileName(subscriber.name, format: format)
        guard placer.path(of: name) != source else {
            // The same name as the first caller's (hash naming, a repeated out=): the same result.
            return stage.deliver([(subscriber, item.result)], afterIndexChanges: item.isIndexed, coalesced: true)
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
        stage.deliver([(subscriber, served)], afterIndexChanges: item.isIndexed, coalesced: true)
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
        stage.deliver([(subscriber, result)], afterIndexChanges: result.status == .saved)
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
        // The index keeps only bodies of successful responses; it does not record which 2xx.
        base.made = DownloadResult.EarlierOutcome(status: .saved, httpStatus: 200, bytes: entry.bodySize)
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
}
