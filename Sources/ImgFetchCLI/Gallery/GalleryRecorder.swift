import Glibc
import ImgFetchCore
import Synchronization

/// `--gallery FILE`: notes every item as the run reports it, and writes the page when the run is over.
///
/// During the run an item costs one compact record appended to a file under `OUTDIR/.imgfetch/`
/// (tiles in one, failures in another), never memory; only the count of failures per error class
/// is held. At the end the page is streamed from those files: the failures class by class, then
/// the tiles, whose thumbnails are made (or found) a batch at a time on every core. The
/// thumbnails are made after the transfers, not beside them, so they never slow a download.
///
/// Appends from many threads are serialized by `state` (a Mutex).
final class GalleryRecorder: Sendable {
    private struct State {
        var tiles: GalleryRecordFile
        var failures: GalleryRecordFile
        var failuresByClass: [DownloadError.Kind: Int] = [:]
        var page: GalleryPageFile?
    }

    /// The page's path, as given.
    let path: String
    private let outputDirectory: String
    private let recordDirectory: String
    private let links: GalleryLinks
    private let limits: DecodeLimits
    private let state: Mutex<State>

    /// Tiles whose thumbnails are made together: enough to keep every core busy, few enough that
    /// a batch's records and previews stay small.
    static let batchSize = 256

    /// Opens `path.part` and the record files; throws (exit 2) when either cannot be written.
    /// `outputDirectory` must exist already.
    init(path: String, outputDirectory: String, limits: DecodeLimits) throws(SetupError) {
        self.path = path
        self.outputDirectory = outputDirectory
        self.limits = limits
        let page = try GalleryPageFile(path: path)
        do throws(SetupError) {
            let pageDirectory = try RelativePath.resolvedDirectory(RelativePath.directory(of: path)).get()
            let name = path.split(separator: "/").last.map(String.init) ?? path
            pageURL = "file:///" + HTMLText.href(RelativePath.segments(ofAbsolute: pageDirectory + "/" + name))
            let output = try RelativePath.resolvedDirectory(outputDirectory).get()
            links = GalleryLinks(pageDirectory: pageDirectory, outputDirectory: output,
                                 thumbnailDirectory: output + "/" + CacheIndex.folderName + "/thumbs")
            recordDirectory = OutputPaths.join(outputDirectory, CacheIndex.folderName)
            if mkdir(recordDirectory, 0o755) != 0 && errno != EEXIST {
                throw SetupError(message: "cannot create '\(recordDirectory)': \(Errno.describe())")
            }
            state = Mutex(State(tiles: try GalleryRecordFile(directory: recordDirectory),
                                failures: try GalleryRecordFile(directory: recordDirectory), page: page))
        } catch {
            page.discard()
            throw SetupError(message: "cannot write gallery '\(path)': \(error.message)")
        }
    }

    /// The page as a browser opens it: `file:///abs/report.html`, percent-encoded.
    let pageURL: String

    /// Where the thumbnails go: `OUTDIR/.imgfetch/thumbs`.
    var thumbnailDirectory: String { recordDirectory + "/thumbs" }

    /// Notes one finished item. Called from any thread.
    func record(_ item: ItemReport) {
        let record = GalleryRecord(item)
        state.withLock { state in
            if record.isTile {
                state.tiles.append(record)
            } else {
                state.failures.append(record)
                state.failuresByClass[record.errorClass ?? .cancelled, default: 0] += 1
            }
        }
    }

    /// Removes the partial page: for a run that never started.
    func discard() {
        state.withLock { $0.page?.discard() }
    }

    /// Writes the page and moves it into place; an error message when it cannot be written. The
    /// run's result does not depend on it.
    func finish(summary: RunSummary) -> String? {
        state.withLock { state -> String? in
            guard let file = state.page else { return nil }
            state.page = nil
            if let failure = state.tiles.failure ?? state.failures.failure {
                file.discard()
                return "cannot write gallery '\(path)': cannot keep its records in '\(recordDirectory)': \(failure)"
            }
            let page = GalleryPage(file: file, links: links)
            page.begin(summary: summary, images: state.tiles.count)
            writeTiles(state.tiles, to: page)
            writeFailures(state, to: page)
            page.end()
            return file.finish()
        }
    }

    /// The failures, most frequent class first, each class's entries in the order they finished.
    private func writeFailures(_ state: State, to page: GalleryPage) {
        let total = state.failures.count
        guard total > 0 else { return }
        page.beginFailures(count: total)
        let classes = state.failuresByClass.sorted { ($1.value, $0.key.rawValue) < ($0.value, $1.key.rawValue) }
        // One pass sorts the failures into a file per class, so each class is then read once.
        // A class whose file cannot be made or written is read from the whole list instead.
        var byClass: [DownloadError.Kind: GalleryRecordFile] = [:]
        if classes.count > 1 {
            for (kind, _) in classes { byClass[kind] = try? GalleryRecordFile(directory: recordDirectory) }
            state.failures.forEachBatch(of: Self.batchSize) { batch in
                for record in batch { byClass[record.errorClass ?? .cancelled]?.append(record) }
            }
            for file in byClass.values { file.flush() }
        }
        for (kind, count) in classes {
            page.beginClass(kind, count: count)
            let source = byClass[kind].flatMap { file in file.failure == nil ? file : nil } ?? state.failures
            source.forEachBatch(of: Self.batchSize) { batch in
                for record in batch where (record.errorClass ?? .cancelled) == kind { page.failure(record) }
            }
            page.endClass()
        }
        page.endFailures()
    }

    /// The tiles in the order their items finished, thumbnails made a batch at a time.
    private func writeTiles(_ tiles: GalleryRecordFile, to page: GalleryPage) {
        page.beginImages(count: tiles.count)
        if tiles.count > 0 {
            let thumbnailer = Result { () throws(DownloadError) in
                try Thumbnailer(directory: thumbnailDirectory, limits: limits)
            }
            let batcher = ThumbnailBatch(thumbnailer: thumbnailer, outputDirectory: outputDirectory)
            tiles.forEachBatch(of: Self.batchSize) { batch in
                for (record, preview) in zip(batch, batcher.previews(for: batch)) { page.tile(record, preview) }
            }
        }
        page.endImages()
    }
}
