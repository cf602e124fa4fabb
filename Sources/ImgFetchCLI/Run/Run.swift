import FoundationEssentials
import Glibc
import ImgFetchCore

/// One run over the lists: each line becomes a request (or a failed item), results go to the reporter.
///
/// The lists are read on their own thread and streamed: each request is handed to the downloader
/// as soon as its line is read. The calling thread waits for the end, or for a signal or a broken
/// pipe, and then cleans up.
struct Run {
    let options: CommandLineOptions
    let reporter: RunReporter
    let control: RunControl

    func execute(_ lists: [ListSource]) throws(SetupError) -> Int32 {
        let started = monotonicSeconds()
        let downloader: ImageDownloader
        let store = ObjectStoreOutput(options)
        if let store, store.settings.partSize < 5 << 20 {
            reporter.warn("IMGFETCH_S3_PART_SIZE is \(store.settings.partSize) bytes, below S3's smallest part (5 MiB): "
                + "AWS refuses to complete such multipart uploads (EntityTooSmall); only stores that allow small parts take them")
        }
        // Uploads an earlier run on this work directory left unfinished (it was killed) are aborted before new ones start.
        for line in store?.abortEarlierUploads() ?? [] { reporter.warn(line) }
        do {
            var configuration = options.downloaderConfiguration(outputDirectory: options.outputDirectory)
            configuration.onWarning = { [reporter] message in reporter.warn(message) }
            configuration.onHostPaused = { [model = reporter.model] host, seconds in
                model.hostPaused(host, seconds: seconds, now: monotonicSeconds())
            }
            downloader = try ImageDownloader(configuration: configuration)
        } catch {
            // A disk that cannot take the run's files (the name claims) is the environment's fault.
            throw SetupError(message: error.message, isTemporary: error.kind == .diskFull || error.kind == .filesystem)
        }
        let dataset = options.outputFormat == .webdataset ? makeDatasetWriter(store: store, downloader: downloader) : nil
        if dataset != nil { warnOfColumnsNamedLikeFields(lists) }
        let uploader = dataset == nil ? store.map {
            ObjectUploader(output: $0, downloader: downloader, threads: ObjectUploader.threads(concurrency: options.concurrency))
        } : nil
        if let dataset, store != nil { control.onLateSignal { dataset.cancelUploads() } }
        // A store that refuses the run's writes, or is down, stops the downloads as a full disk
        // does: what is in flight ends, and every item left fails without a request.
        store?.health.onTrip { [reporter] error in
            reporter.warn("stopping: \(store?.health.reason ?? error.message); the items not yet uploaded fail (storage) without a request")
            uploader?.cancel(failingWith: error)
            downloader.cancelAll(failingWith: error)
        }
        dataset?.onDiskFull { [diskSpace = downloader.diskSpace] in diskSpace.note($0) }
        startThread(name: "imgfetch.list") { [self] in
            if let dataset {
                readShards(lists, into: downloader, dataset: dataset)
            } else {
                read(lists, into: downloader, uploader: uploader)
            }
            reporter.model.listFinished()
            control.listFinished()
        }

        let ending = control.waitForEnding(deadline: options.deadline.map { $0 - (monotonicSeconds() - started) })
        if ending == .completed, lists.allSatisfy({ $0.entries == 0 }) {
            // Read to the end (the run completed) and nothing in them: most likely the wrong file.
            let names = lists.map(\.name).joined(separator: ", ")
            reporter.warn("no URLs in \(names): nothing but blank lines and # comments, or nothing at all")
        }
        // Silenced first: items that fail while the rest is cancelled must not print either.
        if ending == .brokenPipe { reporter.silence() }
        if ending == .deadline, let seconds = options.deadline {
            reporter.warn("the run's deadline of \(Self.secondsText(seconds)) s passed (--deadline): running transfers "
                + "are cancelled, the items still pending fail, and the rest of the list is not read")
            let error = DownloadError(.deadline, "not done within the run's deadline of \(Self.secondsText(seconds)) s (--deadline)")
            // Uploads first: an upload in progress holds results back (an upload thread's, or a
            // shard's, whose writer waits for it at the next shard), which cancelling waits for.
            uploader?.cancel(failingWith: error)
            dataset?.cancelUploads()
            downloader.cancelAll(failingWith: error)
        } else if ending != .completed {
            uploader?.cancel()
            dataset?.cancelUploads()
            downloader.cancelAll()
        }
        control.waitForOutstanding()
        // The uploads first: they run on the downloader's engine.
        uploader?.close()
        let shardProblems = dataset?.finish() ?? []
        downloader.close()
        // A signal during the last shard's upload, after every item was counted, ends as a signal does.
        let finalEnding = control.signalAfterCompletion.map { RunEnding.interrupted(signal: $0) } ?? ending
        for problem in shardProblems { reporter.warn(problem) }
        let summary = reporter.finish(seconds: monotonicSeconds() - started, diskFull: downloader.diskSpace.reason)
        if options.failuresAreData {
            // After the deadline or EPIPE the worker exits 75 at once: its engine runs it again, and
            // draining a stdin that may never end would take the deadline's bound away.
            return WorkerExit.code(finalEnding, summary: summary,
                                   incomplete: !shardProblems.isEmpty || control.wasListUnreadable || !summary.outputProblems.isEmpty)
        }
        switch finalEnding {
        case .completed: return shardProblems.isEmpty ? summary.exitCode : max(summary.exitCode, 1)
        case .deadline: return max(summary.exitCode, 1)
        case .interrupted(let signal): return 128 + signal
        case .brokenPipe: return 128 + SIGPIPE
        }
    }

    /// `30` for 30.0, `0.5` for 0.5: seconds as the user wrote them.
    static func secondsText(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    private func read(_ lists: [ListSource], into downloader: ImageDownloader, uploader: ObjectUploader?) {
        for list in lists {
            while let (number, entry) = list.next() {
                if case .skip = entry { continue }
                // Another process's item (`--shard`): passed over without a trace.
                if let shard = options.shard, !shard.takes(entry, line: number) { continue }
                guard control.admit(rowBytes: entry.row?.bytes ?? 0) else { return }
                reporter.model.itemQueued()
                let position = ListPosition(listName: list.name, line: number)
                if let report = reportWithoutRequest(entry, at: position) {
                    reporter.report(report)
                    control.itemDone(rowBytes: report.row?.bytes ?? 0)
                    continue
                }
                guard case .item(let item) = entry else { continue }
                let transfer = item.url.normalized
                let (slot, progress) = progressTracking(name: item.options.fileName ?? item.url.lastPathSegment, transfer: transfer)
                let row = item.row
                downloader.download(item.url, options: item.options, progress: progress, completion: { result in
                    let report = ItemReport(position: position, displayURL: item.url.redacted, result: result, row: row)
                    let done: ObjectUploader.Done = { report in
                        reporter.report(report, progress: slot, transfer: transfer)
                        control.itemDone(rowBytes: row?.bytes ?? 0)
                    }
                    if let uploader { uploader.submit(report, done: done) } else { done(report) }
                })
            }
        }
    }

    /// The result of an entry that fails without a request: a bad line, or a list that cannot be
    /// read on (which the run control notes); nil for an item.
    func reportWithoutRequest(_ entry: ListEntry, at position: ListPosition) -> ItemReport? {
        switch entry {
        case .invalid(let text, let reason, let row):
            return ItemReport(position: position, displayURL: SecretRedactor.redactURLText(text),
                              result: .failed(DownloadError(.invalidInput, reason)), row: row)
        case .unreadable(let reason):
            control.listUnreadable()
            return ItemReport(position: position, displayURL: "", result: .failed(DownloadError(.invalidInput, reason)))
        case .item, .skip:
            return nil
        }
    }

    /// An item's slot in the progress display and the handler that feeds it; without a display of
    /// running transfers, neither, and the downloader skips the progress fan-out altogether.
    func progressTracking(name: String, transfer: String) -> (ProgressItem?, DownloadProgressHandler?) {
        guard reporter.showsProgress else { return (nil, nil) }
        let slot = ProgressItem()
        let model = reporter.model
        return (slot, { @Sendable received, expected in
            model.progress(slot, transfer: transfer, name: name, received: received, expected: expected)
        })
    }
}

extension Run {
    /// A column named like a field of `KEY.json` (`width`, `status`) cannot go to its top level: its
    /// value goes under `"columns"`, said once per name.
    func warnOfColumnsNamedLikeFields(_ lists: [ListSource]) {
        let settings = options.table
        var said = Set<String>()
        for list in lists {
            for name in list.columnNames where options.sampleLayout.ownFields.contains(name) && name != settings.urlColumn
                && name != options.sampleLayout.omittedColumn
                && name != settings.captionColumn && said.insert(name).inserted {
                // A caption column not named as one: the fix is the option, not a rename.
                let fix = name == "caption" && settings.captionColumn == nil
                    ? "give --caption-column caption to make it the samples' captions"
                    : "rename the column to have it at the top level"
                reporter.warn("column '\(name)' of \(list.name) is named like a field of each sample's KEY.json: "
                    + "its value goes under \"columns\" (\(fix))")
            }
        }
    }
}
