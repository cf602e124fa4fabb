import Glibc
import ImgFetchCore
import Synchronization

/// Counts of a run's outcomes, which decide the exit code.
struct RunSummary: Sendable, Equatable {
    var saved = 0
    var skipped = 0
    var failed = 0
    var cancelled = 0
    /// Saved items in a format imgfetch cannot decode (SVG, ICO, JPEG XL, HEIC): saved unchecked.
    var unverified = 0
    /// Failed items by error class, so that a run of DNS failures reads differently from one of 404s.
    var failedByClass: [DownloadError.Kind: Int] = [:]
    /// Failures reported again from an earlier run's complete shard, without a request.
    var failedEarlier = 0
    /// Files uploaded to object storage (`-o s3://…`), and the rows of a dataset's uploaded shards.
    var uploaded = 0
    var bytes: Int64 = 0
    /// How the cache index satisfied items: no request, 304, full download.
    var fresh = 0
    var stale = 0
    var revalidated = 0
    var downloaded = 0
    /// Body bytes the cache made unnecessary to transfer.
    var reusedBytes: Int64 = 0
    var seconds: Double = 0
    /// What of the run's own output could not be written (the report, the gallery).
    var outputProblems: [String] = []

    var items: Int { saved + skipped + failed + cancelled }

    mutating func add(_ result: DownloadResult) {
        countStatus(of: result, 1)
        if result.status == .failed && result.fromEarlierRun { failedEarlier += 1 }
        countUploads(of: result, 1)
        // A coalesced item shares another item's transfer: its bytes crossed the network once.
        if !result.coalesced {
            bytes += result.bytes
            reusedBytes += result.reusedBytes
        }
        switch result.cache {
        case .fresh: fresh += 1
        case .stale: stale += 1
        case .revalidated: revalidated += 1
        case .downloaded: downloaded += 1
        case nil: break
        }
    }

    /// Moves an item counted with `old`'s status (and class) to `new`'s; bytes and cache counts stay.
    mutating func reclassify(_ old: DownloadResult, as new: DownloadResult) {
        countStatus(of: old, -1)
        countStatus(of: new, 1)
        countUploads(of: old, -1)
        countUploads(of: new, 1)
    }

    /// Adds `step` times the uploads of `result`: a file's objects as the uploader counted them (a
    /// skipped file the store lacked is uploaded too), or a dataset's saved row, whose shard goes
    /// to the store (a shard that then fails to go up revises its rows to failed).
    private mutating func countUploads(of result: DownloadResult, _ step: Int) {
        if result.uploadedObjects > 0 {
            uploaded += step * result.uploadedObjects
        } else if result.status == .saved && result.paths.contains(where: { $0.hasPrefix("s3://") }) {
            uploaded += step
        }
    }

    /// Adds `step` (1, or -1 to take an item back) to the counts of `result`'s status and class.
    private mutating func countStatus(of result: DownloadResult, _ step: Int) {
        switch result.status {
        case .saved:
            saved += step
            if result.format?.isDecodable == false { unverified += step }
        case .skipped: skipped += step
        case .failed:
            failed += step
            if let kind = result.error?.kind {
                failedByClass[kind, default: 0] += step
                if failedByClass[kind] == 0 { failedByClass[kind] = nil }
            }
        case .cancelled: cancelled += step
        }
    }

    /// 0 when every item was saved or skipped, 1 when any failed (or was cancelled).
    var exitCode: Int32 { failed + cancelled > 0 ? ImgFetchCommand.ExitCode.itemFailed : ImgFetchCommand.ExitCode.success }

    /// The one-line summary for stderr.
    var line: String {
        "imgfetch: \(items) item\(items == 1 ? "" : "s"): \(saved) saved"
            + (unverified > 0 ? " (\(unverified) unverified)" : "")
            + ", \(skipped) skipped, \(failed) failed"
            + failedClasses
            + (cancelled > 0 ? ", \(cancelled) cancelled; " : "; ")
            + "\(ByteCount.format(bytes)) in \(ByteCount.oneDecimal(seconds)) s"
            + (uploaded > 0 ? "; \(uploaded) uploaded" : "")
            + cacheLine
    }

    /// ` (2 dns, 1 http)`: the failures by class, most frequent first; empty when nothing failed.
    private var failedClasses: String {
        guard !failedByClass.isEmpty else { return "" }
        let ordered = failedByClass.sorted { ($1.value, $0.key.rawValue) < ($0.value, $1.key.rawValue) }
        let earlier = failedEarlier > 0 ? "; \(failedEarlier) in an earlier run, --retry-failed fetches them again" : ""
        return " (" + ordered.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ") + earlier + ")"
    }

    /// What a run stopped by a full disk says beside its summary: the reason, how many items it
    /// cost, and what to do.
    func diskFullLine(_ reason: String) -> String {
        let count = failedByClass[.diskFull] ?? 0
        return "stopped downloading: \(reason); \(count) item\(count == 1 ? "" : "s") failed with class disk-full. "
            + "Free some space (or lower --min-free) and run again: what was saved is kept and not fetched again"
    }

    /// The cache's part of the summary, when it satisfied any item without a download.
    private var cacheLine: String {
        guard fresh + stale + revalidated > 0 else { return "" }
        var parts = ["\(fresh) fresh", "\(revalidated) revalidated", "\(downloaded) downloaded"]
        if stale > 0 { parts.insert("\(stale) stale", at: 1) }
        return "; cache: " + parts.joined(separator: ", ") + ", \(ByteCount.format(reusedBytes)) not transferred"
    }
}
