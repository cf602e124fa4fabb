import ImgFetchCore
import Synchronization

/// A `RunSummary` that completion handlers on many threads add to.
final class SummaryCounter: Sendable {
    private let summary = Mutex(RunSummary())

    var value: RunSummary { summary.withLock { $0 } }

    func add(_ result: DownloadResult) {
        summary.withLock { $0.add(result) }
    }
}
