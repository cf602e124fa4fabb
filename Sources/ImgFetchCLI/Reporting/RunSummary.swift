import ImgFetchCore
import Synchronization

/// Counts of a run's outcomes, which decide the exit code.
struct RunSummary: Sendable, Equatable {
    var saved = 0
    var skipped = 0
    var failed = 0
    var cancelled = 0
    var bytes: Int64 = 0
    var seconds: Double = 0

    var items: Int { saved + skipped + failed + cancelled }

    mutating func add(_ result: DownloadResult) {
        switch result.status {
        case .saved: saved += 1
        case .skipped: skipped += 1
        case .failed: failed += 1
        case .cancelled: cancelled += 1
        }
        // A coalesced item shares another item's transfer: its bytes crossed the network once.
        if !result.coalesced { bytes += result.bytes }
    }

    /// 0 when every item was saved or skipped, 1 when any failed (or was cancelled).
    var exitCode: Int32 { failed + cancelled > 0 ? ImgFetchCommand.ExitCode.itemFailed : ImgFetchCommand.ExitCode.success }

    /// The one-line summary for stderr.
    var line: String {
        "imgfetch: \(items) item\(items == 1 ? "" : "s"): \(saved) saved, \(skipped) skipped, \(failed) failed"
            + (cancelled > 0 ? ", \(cancelled) cancelled; " : "; ")
            + "\(ByteCount.format(bytes)) in \(String(format: "%.1f", seconds)) s"
    }
}

/// Human-readable byte counts (binary units, as curl and wget print them).
enum ByteCount {
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
