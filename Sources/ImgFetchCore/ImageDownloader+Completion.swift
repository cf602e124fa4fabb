/// What happens when a transfer is over: verify the body, place it under every caller's name,
/// and fan the result out.
extension ImageDownloader {
    /// Called once per transfer, on the engine thread (or the mock transport's).
    func transferFinished(key: String, transferID: Int, context: CacheContext, _ outcome: TransferOutcome) {
        switch outcome {
        case .fetched(let body):
            decodeStage.run { [self] in
                finishFetched(key: key, transferID: transferID, context: context, body)
                transport.release()
            }
        case .notModified(let revalidation):
            decodeStage.run { [self] in
                finishNotModified(key: key, transferID: transferID, context: context, revalidation)
                transport.release()
            }
        case .failed(let error, let attempts, let httpStatus, let httpVersion):
            transport.release()
            // Delivered on a decode worker like every other result: a completion handler that
            // blocks (a stdout pipe nobody reads) must never hold up the engine loop.
            decodeStage.run { [self] in
                guard error.kind != .cancelled else {
                    // Its callers got `cancelled` when they withdrew; one that subscribed while
                    // cancelAll() ran may still be waiting on this transfer and must hear it too.
                    let waiting = registry.abandon(key: key, transferID: transferID)
                    deliver(waiting) { _ in DownloadResult(status: .cancelled, error: Self.cancelled) }
                    return
                }
                let result = DownloadResult.failed(error, attempts: attempts, httpStatus: httpStatus, httpVersion: httpVersion)
                complete(key: key, transferID: transferID, item: FinishedItem(result: result, outputPath: nil)) { _ in result }
            }
        }
    }

    private func finishFetched(key: String, transferID: Int, context: CacheContext, _ body: FetchedBody) {
        var base = DownloadResult(status: .failed)
        base.httpStatus = body.httpStatus
        base.httpVersion = body.httpVersion
        base.bytes = body.bytes
        base.attempts = body.attempts
        let prepared: PreparedOutput
        switch decodeStage.prepare(body) {
        case .failure(let error):
            base.error = error
            complete(key: key, transferID: transferID, item: FinishedItem(result: base, outputPath: nil)) { _ in base }
            return
        case .success(let output):
            prepared = output
        }
        base.format = prepared.format
        base.image = prepared.image
        base.cache = .downloaded
        if configuration.saveAs == .original { base.contentHash = body.contentHash }
        let recorder = CacheRecorder(index: cacheIndex, key: key, body: body, prepared: prepared,
                                     kind: CacheEntry.outputKind(for: configuration))
        // An indexed file that already holds this very body stays untouched (unless reloading,
        // which rewrites every file it downloads).
        let unchanged: (String) -> Bool = { [self] name in
            guard configuration.cachePolicy == .protocol, let entry = context.entry, entry.kind == recorder.kind,
                  entry.contentHash == body.contentHash else { return false }
            return entry.files.contains { $0.name == name && $0.matches(fileStamp(name)) }
        }
        var linked = false
        let indexedNames = context.entry?.fileNames ?? []
        placeForEveryCaller(key: key, transferID: transferID, format: prepared.format, failure: base,
                            isIndexed: recorder.indexes, replaceableNames: indexedNames) { _, name in
            var result = base
            let keep = unchanged(name)
            if keep {
                result.status = .skipped
                result.paths = [placer.path(of: name)]
            } else {
                // The first name gets the temp file itself; later names a copy of it.
                result = place(linked ? .copy(of: prepared.file) : .body(prepared.file), as: name,
                               indexedNames: indexedNames, base: base)
                if result.status == .saved { linked = true }
            }
            if result.status == .saved || keep { recorder.record(name, stamp: fileStamp(name)) }
            return result
        }
    }

    /// Places the output under the file name of every caller of `key` (callers that join meanwhile
    /// too), then fans the results out. Only an output placed somewhere can serve later requests
    /// of the URL; if every placement failed, a later request fetches it again rather than
    /// inherit another name's error.
    func placeForEveryCaller(key: String, transferID: Int, format: ImageFormat, failure: DownloadResult, isIndexed: Bool,
                             replaceableNames: Set<String>, place: (OutputName, String) -> DownloadResult) {
        var placed: [String: DownloadResult] = [:]
        var first: DownloadResult?
        func result(for subscriber: Subscriber) -> DownloadResult? { placed[fileName(subscriber.name, format: format)] }
        while true {
            let item = first.map {
                FinishedItem(result: $0, outputPath: $0.paths.first, isIndexed: isIndexed, replaceableNames: replaceableNames)
            }
            switch registry.complete(key: key, transferID: transferID, item: item, isServed: { result(for: $0) != nil }) {
            case .done(let subscribers):
                let results = placed
                afterIndexCommit { [self] in
                    deliver(subscribers) { results[fileName($0.name, format: format)] ?? failure }
                }
                return
            case .morePending(let subscribers):
                for subscriber in subscribers where result(for: subscriber) == nil {
                    let name = fileName(subscriber.name, format: format)
                    let outcome = place(subscriber.name, name)
                    placed[name] = outcome
                    if first == nil, outcome.status != .failed { first = outcome }
                }
            }
        }
    }

    /// Serves a caller of a URL finished earlier in this run, from that result: a copy of its file
    /// under this caller's name, or the same failure.
    func serve(_ subscriber: Subscriber, key: String, from item: FinishedItem) {
        guard let source = item.outputPath, let format = item.result.format else {
            Self.deliver(item.result, to: subscriber, coalesced: true)
            return
        }
        let name = fileName(subscriber.name, format: format)
        let path = placer.path(of: name)
        var result = item.result
        if path != source {
            do {
                let commit = try placer.place(.file(at: source), as: name, indexedNames: item.replaceableNames)
                result.status = commit == .saved ? .saved : .skipped
                result.paths = [path]
                result.error = nil
                if item.isIndexed, result.status == .saved, let stamp = fileStamp(name) {
                    cacheIndex?.addFile(CacheEntry.File(name: name, stamp: stamp), for: key)
                }
            } catch {
                result = .failed(error, attempts: item.result.attempts, httpStatus: item.result.httpStatus,
                                 httpVersion: item.result.httpVersion)
            }
        }
        // The first caller's entry may still wait for its commit: so does this result.
        let served = result
        guard item.isIndexed else { return Self.deliver(served, to: subscriber, coalesced: true) }
        afterIndexCommit { Self.deliver(served, to: subscriber, coalesced: true) }
    }

    /// The result of placing `source` under `name`: `base` with the status and path, or its error.
    private func place(_ source: OutputPlacer.Source, as name: String, indexedNames: Set<String>,
                       base: DownloadResult) -> DownloadResult {
        var result = base
        do {
            result.status = try placer.place(source, as: name, indexedNames: indexedNames) == .saved ? .saved : .skipped
            result.paths = [placer.path(of: name)]
        } catch {
            result.error = error
        }
        return result
    }

    private func complete(key: String, transferID: Int, item: FinishedItem?, result: (Subscriber) -> DownloadResult) {
        guard case .done(let subscribers) = registry.complete(key: key, transferID: transferID, item: item, isServed: { _ in true }) else {
            return
        }
        deliver(subscribers, result)
    }

    /// Fans a result out; every caller after the first shared the first one's transfer.
    private func deliver(_ subscribers: [Subscriber], _ result: (Subscriber) -> DownloadResult) {
        for (index, subscriber) in subscribers.enumerated() {
            Self.deliver(result(subscriber), to: subscriber, coalesced: index > 0)
        }
    }
}
