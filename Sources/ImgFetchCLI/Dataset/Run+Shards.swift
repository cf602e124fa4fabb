import ImgFetchCore

/// What the CLI keeps with a shard row until it is counted: the item's progress slot and transfer.
struct RowProgress: Sendable {
    let slot: ProgressItem?
    let transfer: String

    static let none = RowProgress(slot: nil, transfer: "")
}

/// The dataset writer of a run: rows carry their progress.
typealias RunDatasetWriter = DatasetWriter<RowProgress>

extension CommandLineOptions {
    /// What each sample's JSON holds besides the fixed fields.
    var sampleLayout: SampleRecord.Layout {
        SampleRecord.Layout(hash: hash, exif: extractExif, omittedColumn: verifyHash?.column)
    }
}

extension Run {
    func makeDatasetWriter(store: ObjectStoreOutput?, downloader: ImageDownloader) -> RunDatasetWriter {
        let pixels = options.saveAs.configuration
        var settings = RunDatasetWriter.Settings(directory: options.outputDirectory, samplesPerShard: options.shardSamples,
                                              pixelExtension: pixels.pixelFormat?.fileExtension,
                                              fingerprint: ShardInput.settings(options))
        settings.namePrefix = options.shardPrefix ?? ShardNames.prefix(for: options.shard)
        settings.layout = options.sampleLayout
        settings.upload = store.map { ShardUpload(store: $0, downloader: downloader) }
        let reporting = RunDatasetWriter.Reporting(
            count: { [reporter, control] report, tag in
                reporter.count(report.result, progress: tag.slot, transfer: tag.transfer)
                control.itemDone(rowBytes: report.row?.bytes ?? 0)
            },
            emit: { [reporter] report in reporter.emit(report) },
            revise: { [reporter] old, new in reporter.revise(old, as: new) })
        return RunDatasetWriter(settings: settings, reporting: reporting)
    }

    /// Rows of a shard held back while its input is compared with the finished shard's.
    private struct HeldShard {
        let shard: Int
        let finished: FinishedShard
        var rows: [(sequence: Int, position: ListPosition, entry: ListEntry, key: String)] = []
        var bytes = 0
    }

    /// Most bytes of rows held back for one shard; past this the shard is fetched again rather
    /// than held whole (an estimate: 256 bytes a row besides its table columns).
    static let heldShardBudget = 64 << 20

    /// The list reader of a WebDataset run: every row gets its place (shard and row, counted over all
    /// lists) and its key, each shard's input is hashed as it is read, and the rows of a shard that
    /// an earlier run completed with the same input and settings are held back until that is sure,
    /// then reported as skipped without a request.
    func readShards(_ lists: [ListSource], into downloader: ImageDownloader, dataset: RunDatasetWriter) {
        let samples = dataset.settings.samplesPerShard
        let prefix = dataset.settings.namePrefix
        let input = ShardInput()
        // For reading finished shards back from the store.
        let client = dataset.settings.upload?.client
        // By bytes: Swift's String equality would take "é" and "e\u{301}" for one key.
        var keys: [[UInt8]: ListPosition] = [:]
        var held: HeldShard?
        var sequence = 0

        /// Hands the row on: to the downloader, or straight to the writer as a failure. False when the run stops.
        func submit(_ sequence: Int, _ position: ListPosition, _ entry: ListEntry, key: String) -> Bool {
            guard control.admit(rowBytes: entry.row?.bytes ?? 0) else { return false }
            reporter.model.itemQueued()
            if var report = reportWithoutRequest(entry, at: position) {
                report.sampleKey = key
                dataset.finished(sequence, report, tag: .none)
                return true
            }
            guard case .item(let item) = entry else { return true }
            let transfer = item.url.normalized
            let (slot, progress) = progressTracking(name: item.url.lastPathSegment, transfer: transfer)
            let row = item.row
            // The row's digest was checked when it was read (`verifiable`): here it is there.
            let verification = options.verifyHash.flatMap { verify -> (HashVerification, String)? in
                if case .digest(let expected) = verify.expectation(of: row) { (verify, expected) } else { nil }
            }
            downloader.download(item.url, options: DownloadOptions(priority: item.options.priority), progress: progress) { result in
                let result = verification.map { $0.check(result, expected: $1) } ?? result
                let report = ItemReport(position: position, displayURL: item.url.redacted, result: result, row: row, sampleKey: key)
                dataset.finished(sequence, report, tag: RowProgress(slot: slot, transfer: transfer))
            }
            return true
        }

        /// Every row of `shard` is read: skip it if it matches its finished shard, else fetch what was held.
        func inputRead(shard: Int) -> Bool {
            let digest = input.finish()
            defer { dataset.inputComplete(shard: shard, digest: digest) }
            guard let holding = held, holding.shard == shard else { return true }
            held = nil
            if holding.finished.digest == digest {
                dataset.skip(shard: shard, stats: holding.finished.stats)
                let path = dataset.settings.location + "/" + ShardNames(shard: shard, prefix: prefix).tar
                for row in holding.rows {
                    guard control.admit(rowBytes: row.entry.row?.bytes ?? 0) else { return false }
                    reporter.model.itemQueued()
                    var result: DownloadResult
                    if let failure = holding.finished.failures[row.sequence % samples] {
                        // The result line is the first run's, word for word (results are data, and a
                        // re-run gives the same rows); the stderr line and the summary say it is old.
                        result = DownloadResult(status: .failed, error: failure.error)
                        result.httpStatus = failure.httpStatus
                        result.bytes = failure.bytes
                        result.format = failure.format
                        result.image = failure.image
                    } else {
                        result = DownloadResult(status: .skipped, paths: [path])
                        result.skipReason = "in \(path), complete from an earlier run"
                        if let made = holding.finished.made[row.sequence % samples] {
                            result.made = made.outcome
                            result.format = made.format
                            result.image = made.image
                            if made.outcome.status != .saved {
                                // Skipped then too (robots.txt): not in the tar, and for the same reason.
                                result.paths = []
                                result.skipReason = made.skipReason
                            }
                        }
                    }
                    result.fromEarlierRun = true
                    let report = ItemReport(position: row.position, displayURL: Self.displayURL(row.entry), result: result,
                                            row: row.entry.row, sampleKey: row.key)
                    dataset.finished(row.sequence, report, tag: .none)
                }
                return true
            }
            return holding.rows.allSatisfy { submit($0.sequence, $0.position, $0.entry, key: $0.key) }
        }

        for list in lists {
            while let (number, read) = list.next() {
                if case .skip = read { continue }
                if let shard = options.shard, !shard.takes(read, line: number) { continue }
                let position = ListPosition(listName: list.name, line: number)
                let (shard, row) = dataset.position(of: sequence)
                var (entry, key) = keyed(read, generated: ShardNames(shard: shard, prefix: prefix).key(row: row), position: position, keys: &keys)
                entry = verifiable(entry)
                // With --retry-failed, a complete shard with failed rows is made again.
                if row == 0, let finished = finishedShard(shard, prefix: prefix, client: client, dataset: dataset),
                   finished.settings == dataset.settings.fingerprint, !(options.retryFailed && !finished.failures.isEmpty) {
                    held = HeldShard(shard: shard, finished: finished)
                }
                input.add(entry, key: key)
                if held != nil {
                    held!.rows.append((sequence, position, entry, key))
                    held!.bytes += 256 + (entry.row?.bytes ?? 0)
                    if held!.bytes > Self.heldShardBudget {
                        let rows = held!.rows
                        held = nil
                        guard rows.allSatisfy({ submit($0.sequence, $0.position, $0.entry, key: $0.key) }) else { return }
                    }
                } else {
                    guard submit(sequence, position, entry, key: key) else { return }
                }
                sequence += 1
                if row == samples - 1 { guard inputRead(shard: shard) else { return } }
            }
        }
        if sequence % samples != 0 { guard inputRead(shard: sequence / samples) else { return } }
        dataset.listEnded(rows: sequence)
    }

    /// Shard `shard` as an earlier run completed it: in the object store with `-o s3://…`, else in the output directory.
    private func finishedShard(_ shard: Int, prefix: String, client: S3Client?, dataset: RunDatasetWriter) -> FinishedShard? {
        if let client, let store = dataset.settings.upload?.store {
            return FinishedShard.read(shard: shard, in: store, client: client, prefix: prefix)
        }
        return FinishedShard.read(shard: shard, in: options.outputDirectory, prefix: prefix)
    }

    /// The row's key: its key column's value (`--key-column`), checked and not seen before, or
    /// `generated`. A row whose key is missing, unusable or taken fails.
    private func keyed(_ entry: ListEntry, generated: String, position: ListPosition,
                       keys: inout [[UInt8]: ListPosition]) -> (ListEntry, String) {
        guard let column = options.table.keyColumn else { return (entry, generated) }
        let text = Self.displayURL(entry)
        guard let key = entry.row?.key else {
            if case .invalid = entry { return (entry, generated) }
            return (.invalid(text: text, reason: "no value in column '\(column)' for the sample key", row: entry.row), generated)
        }
        if let problem = SampleKey.problem(key) {
            return (.invalid(text: text, reason: "unusable key '\(ResultLine.clean(key))' in column '\(column)': \(problem)", row: entry.row), generated)
        }
        if let first = keys[Array(key.utf8)] {
            return (.invalid(text: text, reason: "duplicate key '\(key)' in column '\(column)' (first at \(first))", row: entry.row), key)
        }
        keys[Array(key.utf8)] = position
        return (entry, key)
    }

    /// The entry, or an invalid one when `--verify-hash` is given and its column holds no usable digest.
    private func verifiable(_ entry: ListEntry) -> ListEntry {
        guard let verify = options.verifyHash, case .item = entry,
              case .unusable(let reason) = verify.expectation(of: entry.row) else { return entry }
        return .invalid(text: Self.displayURL(entry), reason: reason, row: entry.row)
    }

    /// The URL an entry shows in its result.
    private static func displayURL(_ entry: ListEntry) -> String {
        switch entry {
        case .item(let item): item.url.redacted
        case .invalid(let text, _, _): SecretRedactor.redactURLText(text)
        case .skip, .unreadable: ""
        }
    }
}
