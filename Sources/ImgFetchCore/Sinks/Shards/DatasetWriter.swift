import Dispatch
import Synchronization

/// Puts a run's rows into WebDataset shards (`--output-format webdataset`) in input order.
///
/// Rows finish in any order; each is held here until every row before it is written, then written
/// to its shard (`ShardWriter`) and counted (which lets the list reader go on). Its result lines
/// wait until the shard is complete, so that a line never says "saved" of a shard that was not
/// written: when the shard cannot be completed (a full disk) its saved rows are printed as failed
/// with the reason, when the run stops first as cancelled. Past `lineBudget` of waiting lines they
/// are printed as their rows are written, so memory does not grow with the shard size.
///
/// A shard is completed once all its rows are written and the list reader has hashed its input;
/// a shard found complete by an earlier run is not opened at all (its rows come as skipped).
/// After each shard it writes, the dataset's `stats.json` (`ShardNames.datasetStats`) is written
/// anew with the sum of the counts of every shard written or found complete so far (and once more
/// at the end, when shards were found complete after the last one written). A run that writes no
/// shard writes it only when it is missing or says otherwise: a re-run with nothing to do writes
/// nothing.
///
/// Called from the delivery thread and the list reader's; all state is behind `state`'s lock, and
/// rows are written and counted under it, one at a time. A complete shard is committed and
/// uploaded, and result lines are printed, on the writer's own thread, `imgfetch.shards`, in
/// order: the rows of the next shard are written meanwhile.
public final class DatasetWriter<Tag: Sendable>: Sendable {
    public struct Settings: Sendable {
        public let directory: String
        public let samplesPerShard: Int
        /// The image member's extension (`--save-as`), nil for the original's.
        public let pixelExtension: String?
        /// What else decides a shard's bytes (`ShardInput.settings`), kept in its stats file.
        public let fingerprint: String
        /// The start of every shard's names and generated keys (`ShardNames.prefix`).
        public var namePrefix = ""
        /// What each sample's JSON holds besides the fixed fields (`--hash`, `--extract-exif`, `--verify-hash`).
        public var layout = SampleRecord.Layout()
        /// With `-o s3://…`, where complete shards are uploaded from `directory` (the work directory).
        public var upload: ShardUpload?

        /// Where shards are, as result lines and messages name them: the directory, or `s3://BUCKET/PREFIX`.
        public var location: String { upload?.store.location.description ?? directory }

        public init(directory: String, samplesPerShard: Int, pixelExtension: String?, fingerprint: String) {
            self.directory = directory
            self.samplesPerShard = samplesPerShard
            self.pixelExtension = pixelExtension
            self.fingerprint = fingerprint
        }
    }

    /// A finished row, waiting for the rows before it.
    private struct Row {
        let report: ItemReport
        /// What the caller keeps with the row until it is counted (the CLI: its progress slot).
        let tag: Tag
    }

    /// Where rows go once written, each in input order: `count` under the writer's lock as a row
    /// is written, `emit` and `revise` on its finisher thread once the row's shard is settled.
    public struct Reporting: Sendable {
        /// Counts a written row (and lets the list reader admit another), with its tag.
        public let count: @Sendable (ItemReport, Tag) -> Void
        /// Prints a row's lines.
        public let emit: @Sendable (ItemReport) -> Void
        /// A counted row's outcome changed from the first result to the second.
        public let revise: @Sendable (DownloadResult, DownloadResult) -> Void

        public init(count: @escaping @Sendable (ItemReport, Tag) -> Void, emit: @escaping @Sendable (ItemReport) -> Void,
                    revise: @escaping @Sendable (DownloadResult, DownloadResult) -> Void) {
            self.count = count
            self.emit = emit
            self.revise = revise
        }
    }

    /// Most bytes of result lines waiting for their shard (an estimate: 512 bytes a row besides
    /// its table columns).
    static var lineBudget: Int { 8 << 20 }

    private struct State {
        var next = 0
        var waiting: [Int: Row] = [:]
        var shard: ShardWriter?
        /// Reports of the open shard's rows, printed when it is complete.
        var lines: [ItemReport] = []
        var lineBytes = 0
        var skipped: Set<Int> = []
        var inputDigests: [Int: String] = [:]
        var totalRows: Int?
        /// What went wrong with shards, said once the run is over.
        var problems: [String] = []
    }

    public let settings: Settings
    private let state = Mutex(State())
    /// Where complete shards are committed and uploaded, and every result line is printed, in
    /// order: one thread, `imgfetch.shards`, so that the rows of the next shard are written (and
    /// the list reader goes on) while a shard goes to disk and up to the store.
    private let finisher = Executor<@Sendable () -> Void>(threadNames: ["imgfetch.shards"], taking: .all) { jobs in
        for job in jobs { job() }
    }
    /// One complete shard at a time goes to the finisher: the writer of the shard after it waits
    /// (under the lock, holding up the rows behind it) rather than piling shards on the disk
    /// when the store is slower than the fetches.
    private let finishing = DispatchSemaphore(value: 1)
    /// What went wrong on the finisher, kept apart from `state`, whose lock may be held by a
    /// writer waiting for the finisher.
    private let finisherProblems = Mutex<[String]>([])
    private let reporting: Reporting
    /// The counts of the shards committed or found complete so far, and how many; whether a shard
    /// was written, and whether `stats.json` lacks shards found complete since. The finisher's alone.
    private let totals = Mutex((stats: ShardStats(), shards: 0, wroteShard: false, unsaved: false))
    /// Hears of a shard write that failed for want of room (the downloader's `DiskSpaceGuard`).
    private let diskFull = Mutex<(@Sendable (DownloadError) -> Void)?>(nil)

    public init(settings: Settings, reporting: Reporting) {
        self.settings = settings
        self.reporting = reporting
    }

    /// `body` hears of the first write of a shard that fails with ENOSPC or EDQUOT (and of later ones).
    public func onDiskFull(_ body: @escaping @Sendable (DownloadError) -> Void) {
        diskFull.withLock { $0 = body }
    }

    /// The shard of row `sequence` (counted over every list, from 0) and its row within the shard.
    public func position(of sequence: Int) -> (shard: Int, row: Int) {
        (sequence / settings.samplesPerShard, sequence % settings.samplesPerShard)
    }

    /// Row `sequence` is done: `report`, whose `sampleKey` names its sample, and what the caller
    /// keeps with it until it is counted. Any thread.
    public func finished(_ sequence: Int, _ report: ItemReport, tag: Tag) {
        state.withLock { state in
            state.waiting[sequence] = Row(report: report, tag: tag)
            while let row = state.waiting.removeValue(forKey: state.next) {
                write(row, sequence: state.next, &state)
                state.next += 1
                completeShardIfDone(&state)
            }
        }
    }

    /// The list reader has read every row of `shard`; `digest` is their `ShardInput` hash.
    public func inputComplete(shard: Int, digest: String) {
        state.withLock { state in
            state.inputDigests[shard] = digest
            completeShardIfDone(&state)
        }
    }

    /// `shard` is complete from an earlier run: its rows will come as skipped, and nothing is
    /// written but the dataset's `stats.json`, which adds the shard's `stats`.
    public func skip(shard: Int, stats: ShardStats?) {
        state.withLock { _ = $0.skipped.insert(shard) }
        if let stats { finisher.submit { [self] in counted(stats, written: false) } }
    }

    /// The lists are read: `rows` rows in all, which may end the last shard early.
    public func listEnded(rows: Int) {
        state.withLock { state in
            state.totalRows = rows
            completeShardIfDone(&state)
        }
    }

    /// The run is cancelled: a shard upload in progress ends (its rows fail as cancelled).
    public func cancelUploads() {
        settings.upload?.stop.request()
    }

    /// The run is over: a shard still open was cut short and is discarded (its rows' lines are
    /// printed as cancelled). Returns what went wrong with shards (empty when every shard the run
    /// wrote is complete).
    public func finish() -> [String] {
        state.withLock { state in
            if let shard = state.shard {
                shard.discard()
                state.shard = nil
                let path = settings.location + "/" + shard.names.tar
                release(&state, failure: DownloadError(.cancelled, "cancelled before shard \(path) was complete"))
                if shard.rows > 0 { state.problems.append("shard \(path) was cut short and is not written; run again to complete it") }
            }
        }
        // The shards still going to disk and the store, and their lines.
        finisher.close()
        // Shards found complete after the last one written are in no stats.json yet; with none
        // written, the file is made when it is missing or stale (a dataset of an earlier build).
        let (wrote, unsaved) = totals.withLock { ($0.wroteShard, $0.unsaved) }
        if unsaved { saveDatasetStats(onlyIfChanged: !wrote) }
        return state.withLock { $0.problems } + finisherProblems.withLock { $0 }
    }

    private func write(_ row: Row, sequence: Int, _ state: inout State) {
        let (shard, _) = position(of: sequence)
        var report = row.report
        guard !state.skipped.contains(shard) else {
            reporting.count(report, row.tag)
            // After the lines of the shards before it, which may still be on their way.
            let skipped = report
            finisher.submit { [reporting] in reporting.emit(skipped) }
            return
        }
        if state.shard == nil {
            state.shard = ShardWriter(shard: shard, directory: settings.directory, location: settings.location,
                                      pixelExtension: settings.pixelExtension, namePrefix: settings.namePrefix,
                                      layout: settings.layout)
        }
        report = state.shard!.add(report, key: report.sampleKey ?? "")
        noteDiskFull(report.result.error)
        reporting.count(report, row.tag)
        state.lines.append(report)
        state.lineBytes += 512 + (report.row?.bytes ?? 0)
        if state.lineBytes > Self.lineBudget { release(&state, failure: nil) }
    }

    /// Prints the waiting lines, on the finisher; with `failure`, the saved rows among them become
    /// failed (or cancelled, for a `cancelled` failure) first.
    private func release(_ state: inout State, failure: DownloadError?) {
        let lines = takeLines(&state)
        finisher.submit { [self] in print(lines, failure: failure) }
    }

    /// The lines waiting for the open shard, taken out of the state.
    private func takeLines(_ state: inout State) -> [ItemReport] {
        defer {
            state.lines.removeAll()
            state.lineBytes = 0
        }
        return state.lines
    }

    /// Prints `lines`, each saved one made failed by `failure` when there is one. On the finisher.
    private func print(_ lines: [ItemReport], failure: DownloadError?) {
        noteDiskFull(failure)
        for var report in lines {
            if let failure, report.result.status == .saved {
                let old = report.result
                report.result = failure.kind == .cancelled ? .cancelled
                    : .failed(failure, attempts: old.attempts, httpStatus: old.httpStatus, httpVersion: old.httpVersion)
                report.result.paths = []
                reporting.revise(old, report.result)
            }
            reporting.emit(report)
        }
    }

    /// Adds a complete shard's counts to the dataset's; after a shard `written` by this run, writes
    /// `stats.json` anew (and uploads it with `-o s3://…`). On the finisher.
    private func counted(_ stats: ShardStats, written: Bool) {
        let save = totals.withLock { totals in
            totals.stats.add(stats)
            totals.shards += 1
            totals.wroteShard = totals.wroteShard || written
            totals.unsaved = !written
            return written
        }
        if save { saveDatasetStats() }
    }

    /// Writes the dataset's `stats.json` from the totals, atomically; `onlyIfChanged`: only when
    /// the file there (in the store with `-o s3://…`) is not already the same.
    private func saveDatasetStats(onlyIfChanged: Bool = false) {
        let (total, shards) = totals.withLock { totals in
            totals.unsaved = false
            return (totals.stats, totals.shards)
        }
        let name = ShardNames.datasetStats(prefix: settings.namePrefix)
        var json = JSONWriter()
        json.add("shards", shards)
        total.write(to: &json)
        if onlyIfChanged {
            let existing: [UInt8]?
            if let upload = settings.upload {
                existing = (try? upload.client.get(bucket: upload.store.location.bucket, key: upload.store.location.key(name),
                                                   limit: 1 << 20))??.bytes
            } else {
                existing = FinishedShard.contents(of: settings.directory + "/" + name, limit: 1 << 20)
            }
            if existing == Array(json.line.utf8) { return }
        }
        do throws(DownloadError) {
            let file = try ShardWriter.staged(name, in: settings.directory)
            try file.write(json.line)
            try file.commit()
            try settings.upload?.upload(file: name, from: settings.directory)
        } catch {
            finisherProblems.withLock { $0.append("\(settings.location)/\(name) not written: \(error.message)") }
        }
    }

    private func noteDiskFull(_ error: DownloadError?) {
        guard let error, error.kind == .diskFull else { return }
        diskFull.withLock { $0 }?(error)
    }

    /// Completes (or discards) the open shard once all its rows are written and its input is hashed.
    private func completeShardIfDone(_ state: inout State) {
        guard let shard = state.shard else { return }
        let expected = state.totalRows.map { min(settings.samplesPerShard, $0 - shard.shard * settings.samplesPerShard) }
            ?? settings.samplesPerShard
        guard shard.rows >= expected, let digest = state.inputDigests[shard.shard] else { return }
        state.shard = nil
        state.inputDigests[shard.shard] = nil
        let path = settings.location + "/" + shard.names.tar
        // A shard broken by a failed write says why below (commit throws it).
        if shard.cutShort && shard.failure == nil {
            shard.discard()
            release(&state, failure: shard.cutShortByFullDisk
                ? DownloadError(.diskFull, "shard \(path) not written: the output's disk is full")
                : DownloadError(.cancelled, "cancelled before shard \(path) was complete"))
            state.problems.append("shard \(path) was cut short and is not written; run again to complete it")
            return
        }
        // Committed and uploaded on the finisher: the next shard's rows go on meanwhile.
        let lines = takeLines(&state)
        finishing.wait()
        finisher.submit { [self] in
            defer { finishing.signal() }
            do throws(DownloadError) {
                try shard.commit(inputDigest: digest, settings: settings.fingerprint)
                try settings.upload?.upload(shard.names, from: settings.directory)
                print(lines, failure: nil)
                counted(shard.stats, written: true)
            } catch {
                print(lines, failure: error)
                finisherProblems.withLock { $0.append(error.message) }
            }
        }
    }
}
