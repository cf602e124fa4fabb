import ImgFetchCore
import Synchronization

/// Everything a run shows: one result per item on stdout (tab-separated, JSON, or for a person
/// at a terminal) and in the report file, error lines and progress on stderr, and the summary
/// at the end.
///
/// stdout lines from many threads are serialized by `stdoutLock` so they never interleave.
final class RunReporter: Sendable {
    private let results: ResultOutput
    private let display: StatusDisplay
    let model: ProgressModel
    private let reportFile: ReportFile?
    private let quiet: Bool
    /// On a terminal, lines for items left as they were too (`-v`).
    private let verbose: Bool
    private let gallery: GalleryRecorder?
    private let stdoutLock = Mutex(())
    /// After a broken pipe the run stops quietly: nothing more on stdout or stderr.
    private let silenced = Atomic<Bool>(false)
    /// Items left as they were whose human line was left out; the summary says how to see them.
    private let unlisted = Atomic<Int>(0)

    init(results: ResultOutput, display: StatusDisplay, model: ProgressModel, reportFile: ReportFile?, quiet: Bool,
         verbose: Bool = false, gallery: GalleryRecorder? = nil) {
        self.verbose = verbose
        self.results = results
        self.display = display
        self.model = model
        self.reportFile = reportFile
        self.quiet = quiet
        self.gallery = gallery
    }

    /// Whether per-transfer progress is shown (a bar, or `--progress plain`'s status lines).
    var showsProgress: Bool { display.showsProgress }

    /// One list item is done. Called from any thread.
    ///
    /// - Parameters:
    ///   - progress: the item's slot in the progress model, if it had a transfer.
    ///   - transfer: the identity of its transfer (the normalized URL).
    func report(_ item: ItemReport, progress: ProgressItem? = nil, transfer: String = "") {
        model.finished(progress, transfer: transfer, item.result)
        emit(item)
    }

    /// Counts an item's result in the progress and the summary without printing its lines yet
    /// (`emit` does later: a shard's rows are printed once the shard is complete).
    func count(_ result: DownloadResult, progress: ProgressItem?, transfer: String) {
        model.finished(progress, transfer: transfer, result)
    }

    /// An item counted as `old` turned out otherwise (its shard could not be completed).
    func revise(_ old: DownloadResult, as new: DownloadResult) {
        model.revise(old, as: new)
    }

    /// Prints an item's lines: stdout, the report file, the error line. Called from any thread.
    func emit(_ item: ItemReport) {
        let json = results.format == .jsonl || reportFile != nil ? JSONLine.encode(item) : nil
        gallery?.record(item)
        let loud = !silenced.load(ordering: .relaxed)
        // A person needs no line per item left as it was (a re-run would print thousands): the
        // summary counts them, and says that -v lists them.
        let human = if case .human = results.format { true } else { false }
        let unlistedHere = human && !verbose && Self.isUnchanged(item.result)
        if unlistedHere { unlisted.add(1, ordering: .relaxed) }
        let line: String? = switch results.format {
        case _ where !loud || unlistedHere: nil
        case .jsonl: json!
        case .tabSeparated: ResultLine.tabSeparated(item)
        // A person needs no line per cancelled item: the summary counts them.
        case .human where item.result.status == .cancelled: nil
        case .human(let colors): HumanResultLine.format(item, colors: colors)
        }
        let error = loud && results.errorsOnStderr ? ResultLine.error(item) : nil
        // One lock for the report, the result line and its error line: the report lists items
        // in the order stdout shows them, and no other item's line lands between the two.
        stdoutLock.withLock { _ in
            if let json { reportFile?.append(json) }
            if let line { results.sink.write(line) }
            if let error { display.message(error) }
        }
    }

    /// A skipped item left as it was: already there, fresh in the cache, revalidated, or in a shard
    /// complete from an earlier run; not one that robots.txt kept from being fetched.
    static func isUnchanged(_ result: DownloadResult) -> Bool {
        result.status == .skipped && (result.skipReason == nil || result.fromEarlierRun)
    }

    /// A warning about the whole run (not one item), on stderr. Called from any thread.
    func warn(_ message: String) {
        guard !silenced.load(ordering: .relaxed) else { return }
        display.message("imgfetch: warning: \(ResultLine.clean(message))\n")
    }

    /// Stops all further output (after EPIPE on stdout).
    func silence() {
        silenced.store(true, ordering: .relaxed)
    }

    /// The run is over: completes the report file and the gallery, and shows the summary (unless
    /// quiet or silenced). `diskFull`: why the run stopped downloading, when its disk filled up
    /// (said even when quiet: it is an error of the whole run).
    func finish(seconds: Double, diskFull: String? = nil) -> RunSummary {
        var summary = model.summary
        summary.seconds = seconds
        let reportError = reportFile?.finish()
        let galleryError = gallery?.finish(summary: summary)
        summary.outputProblems = [reportError, galleryError].compactMap(\.self)
        let loud = !silenced.load(ordering: .relaxed)
        for error in [reportError, galleryError].compactMap(\.self) where loud { display.message("imgfetch: \(error)\n") }
        // Where the page is, as a link a terminal can open.
        if let gallery, galleryError == nil, loud, !quiet { display.message("imgfetch: gallery: \(gallery.pageURL)\n") }
        if let diskFull, loud, summary.failedByClass[.diskFull] != nil { display.message("imgfetch: \(ResultLine.clean(summary.diskFullLine(diskFull)))\n") }
        let hint = unlisted.load(ordering: .relaxed) > 0 ? " (-v lists the items left as they were)" : ""
        display.finish(summary: quiet || !loud ? nil : summary.line + hint)
        return summary
    }
}
