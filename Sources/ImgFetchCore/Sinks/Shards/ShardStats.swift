/// The counts of a shard's rows (`N_stats.json`) or of a whole dataset (`stats.json`): imgfetch's
/// own (`rows`, `status` by status, `errors` by class) and img2dataset's, with its meanings, so
/// that its tools and users' scripts read either tool's stats:
///
/// - `count`: rows;
/// - `successes`: samples written;
/// - `failed_to_download`: rows that failed before or during the download (HTTP, network, an
///   invalid row, `hash-mismatch`), and those cancelled;
/// - `failed_to_resize`: rows whose body was downloaded but is not an image imgfetch keeps
///   (`not-an-image`, `truncated`, `unverified`, `too-small`, `aspect-ratio`, and `too-large` for a
///   body that came whole, over `--max-pixels`, as img2dataset's `max_image_area` counts it);
/// - `status_dict`: `success` and each error class, with their counts.
public struct ShardStats: Equatable, Sendable {
    public private(set) var rows = 0
    /// By `DownloadResult.Status` name: saved, skipped, failed, cancelled.
    public private(set) var statuses: [String: Int] = [:]
    /// By error class.
    public private(set) var errors: [String: Int] = [:]
    /// Rows that failed in the decode stage (`resizeClasses`, and `too-large` with its body).
    public private(set) var failedToResize = 0

    /// The classes of the decode stage: the body came, the image is not kept.
    static let resizeClasses: Set<DownloadError.Kind> = [.notAnImage, .truncated, .unverified, .tooSmall, .aspectRatio]

    public init() {}

    /// Counts one row's result.
    public mutating func count(_ result: DownloadResult) {
        rows += 1
        statuses[result.status.rawValue, default: 0] += 1
        if let error = result.error {
            errors[error.kind.rawValue, default: 0] += 1
            // A body over --max-size was cut off in transfer: no bytes are counted for it.
            if Self.resizeClasses.contains(error.kind) || (error.kind == .tooLarge && result.bytes > 0) { failedToResize += 1 }
        }
    }

    /// Adds another shard's counts.
    public mutating func add(_ other: ShardStats) {
        rows += other.rows
        statuses.merge(other.statuses, uniquingKeysWith: +)
        errors.merge(other.errors, uniquingKeysWith: +)
        failedToResize += other.failedToResize
    }

    public var successes: Int { statuses[DownloadResult.Status.saved.rawValue] ?? 0 }
    /// Rows that are neither samples nor resize failures (skipped rows are a finished shard's and
    /// are counted by that shard's own stats).
    public var failedToDownload: Int {
        (statuses[DownloadResult.Status.failed.rawValue] ?? 0) + (statuses[DownloadResult.Status.cancelled.rawValue] ?? 0)
            - failedToResize
    }

    /// Adds the counts to `json`: imgfetch's fields, then img2dataset's.
    public func write(to json: inout JSONWriter) {
        json.add("rows", rows)
        json.add("status") { statuses in
            for status in [DownloadResult.Status.saved, .skipped, .failed, .cancelled] {
                statuses.add(status.rawValue, self.statuses[status.rawValue] ?? 0)
            }
        }
        json.add("errors") { errors in
            for (kind, count) in self.errors.sorted(by: { $0.key < $1.key }) { errors.add(kind, count) }
        }
        json.add("count", rows)
        json.add("successes", successes)
        json.add("failed_to_download", failedToDownload)
        json.add("failed_to_resize", failedToResize)
        json.add("status_dict") { dict in
            if successes > 0 { dict.add("success", successes) }
            for (kind, count) in errors.sorted(by: { $0.key < $1.key }) { dict.add(kind, count) }
        }
    }

    /// The counts of a stats file's members; nil when they are not there. A stats file written
    /// before `failed_to_resize` was counts its decode-stage classes as resize failures.
    init?(members: [(key: String, value: String)]) {
        func value(_ key: String) -> String? { members.first { $0.key == key }?.value }
        func counts(_ key: String) -> [String: Int]? {
            guard let text = value(key), let fields = try? JSONObjectScanner.members(of: Array(text.utf8)) else { return nil }
            var counts: [String: Int] = [:]
            for field in fields {
                guard let count = Int(field.value) else { return nil }
                counts[field.key] = count
            }
            return counts
        }
        guard let rows = value("rows").flatMap({ Int($0) }), let statuses = counts("status"), let errors = counts("errors") else {
            return nil
        }
        self.rows = rows
        self.statuses = statuses.filter { $0.value != 0 }
        self.errors = errors
        failedToResize = value("failed_to_resize").flatMap { Int($0) }
            ?? errors.filter { Self.resizeClasses.contains(DownloadError.Kind(storedName: $0.key)) }.values.reduce(0, +)
    }
}
