import FoundationEssentials
import Glibc

/// The files of one WebDataset shard, written in input order: the tar of samples, the results
/// file (one JSON line per row, failures too) and, last, the stats file. The tar and the results
/// are written under temp names and renamed when the shard is complete; the stats file is renamed
/// into place after both, so its presence means the shard is whole.
///
/// A write error (a full disk) breaks the shard: its temp files go at once, the row being written
/// and every later row of the shard fail with the OS's reason, and nothing of it is renamed.
///
/// Used by one thread at a time: under the `DatasetWriter`'s lock while its rows are written, then
/// by the writer's finisher thread alone, which commits it; hence `@unchecked Sendable`.
final class ShardWriter: @unchecked Sendable {
    let shard: Int
    let names: ShardNames
    private let directory: String
    /// Where the shard ends up, as result lines name it: `directory`, or `s3://BUCKET/PREFIX`.
    private let location: String
    private var tar: StagedFile?
    private var tarWriter: TarWriter?
    private var results: StagedFile?
    /// Why the shard cannot be completed; nil while it can.
    private(set) var failure: DownloadError?
    /// A row was cancelled or cut short by the run's end: the shard is not whole, and is discarded.
    private(set) var cutShort = false
    /// The row that cut the shard short failed for a full disk (not a signal or the deadline).
    private(set) var cutShortByFullDisk = false
    /// The counts of the rows written so far.
    private(set) var stats = ShardStats()
    var rows: Int { stats.rows }
    private let startedAt = Date()
    private let startedMonotonic = monotonicSeconds()

    /// The image member's extension for every sample (`--save-as jpeg`: `jpg`); nil: the original's format's.
    private let pixelExtension: String?

    /// What each sample's JSON holds besides the fixed fields.
    private let layout: SampleRecord.Layout

    init(shard: Int, directory: String, location: String? = nil, pixelExtension: String?, namePrefix: String = "",
         layout: SampleRecord.Layout = SampleRecord.Layout()) {
        self.pixelExtension = pixelExtension
        self.layout = layout
        self.shard = shard
        names = ShardNames(shard: shard, prefix: namePrefix)
        self.directory = directory
        self.location = location ?? directory
    }

    /// Writes one row, in input order: its members when it has an output, and its results line.
    /// Returns the report as it stands afterwards (failed if the shard could not take it).
    func add(_ report: ItemReport, key: String) -> ItemReport {
        var report = report
        report.sampleKey = key
        let status = report.result.status
        // A row that a full disk failed, too: once there is room, a re-run completes the shard.
        if status == .cancelled || report.result.error?.kind == .deadline { cutShort = true }
        if report.result.error?.kind == .diskFull { cutShort = true; cutShortByFullDisk = true }
        if status == .saved, failure == nil, let output = report.result.handedOver {
            report.result.paths = [location + "/" + names.tar]
            do {
                try openIfNeeded()
                try writeSample(report, key: key, output: output)
            } catch {
                breakShard(error)
            }
        }
        if let failure, report.result.status == .saved {
            report.result = .failed(failure, attempts: report.result.attempts, httpStatus: report.result.httpStatus,
                                    httpVersion: report.result.httpVersion)
        }
        report.result.handedOver = nil
        stats.count(report.result)
        if failure == nil {
            do {
                try openIfNeeded()
                try results?.write(JSONLine.encode(report))
            } catch {
                breakShard(error)
            }
        }
        return report
    }

    /// Completes the shard: closes the tar, renames the tar and the results into place, then
    /// writes the stats file, which holds `inputDigest` and `settings` for re-runs.
    func commit(inputDigest: String, settings: String) throws(DownloadError) {
        if let failure { throw failure }
        try openIfNeeded()
        guard let tar, let tarWriter, let results else { return }
        do {
            try tarWriter.finish()
            let tarBytes = tarWriter.offset
            try tar.commit()
            try results.commit()
            let stats = try Self.staged(names.stats, in: directory)
            try stats.write(statsJSON(inputDigest: inputDigest, settings: settings, tarBytes: tarBytes))
            try stats.commit()
        } catch {
            breakShard(error)
            throw error
        }
    }

    /// Removes whatever the shard wrote under temp names; nothing is written after this.
    func discard() {
        tar?.discard()
        results?.discard()
        // The descriptors are closed: their numbers will be reused by other files and sockets.
        tar = nil
        tarWriter = nil
        results = nil
    }

    private func openIfNeeded() throws(DownloadError) {
        if let failure { throw failure }
        guard tar == nil else { return }
        // An earlier run's stats file must not outlive the files it describes: were this run to
        // rename the tar and then die, the old stats would vouch for the new tar.
        if unlink(directory + "/" + names.stats) != 0 && errno != ENOENT {
            throw DownloadError(.filesystem, "cannot remove \(directory)/\(names.stats): \(Errno.describe())")
        }
        let tar = try Self.staged(names.tar, in: directory)
        self.tar = tar
        tarWriter = TarWriter(fd: tar.fd, displayName: tar.finalPath)
        results = try Self.staged(names.results, in: directory)
    }

    /// A shard's file `name` in `directory`, under a hidden temp name until it is committed.
    static func staged(_ name: String, in directory: String) throws(DownloadError) -> StagedFile {
        do {
            return try StagedFile(directory + "/" + name, tempName: .hidden)
        } catch {
            throw error.downloadError
        }
    }

    private func writeSample(_ report: ItemReport, key: String, output: OutputFile) throws(DownloadError) {
        guard let tarWriter, let tar else { return }
        let mtime = report.result.lastModified ?? 0
        let ext = pixelExtension ?? report.result.format?.fileExtension ?? "bin"
        try tarWriter.append(name: key + "." + ext, size: output.size, mtime: mtime) { () throws(DownloadError) in
            try output.write(to: tar.fd, destinationName: tar.finalPath)
        }
        try tarWriter.append(name: key + ".json", mtime: mtime, bytes: Array(SampleRecord.json(report, key: key, layout: layout).utf8))
        if let caption = report.row?.caption {
            try tarWriter.append(name: key + ".txt", mtime: mtime, bytes: Array(caption.utf8))
        }
    }

    private func breakShard(_ error: DownloadError) {
        guard failure == nil else { return }
        failure = DownloadError(error.kind == .diskFull ? .diskFull : .filesystem, "shard \(names.tar) not written: \(error.message)")
        discard()
    }

    /// The stats file: the counts (`ShardStats`), img2dataset's times (seconds since 1970) and
    /// duration, and what a re-run compares.
    private func statsJSON(inputDigest: String, settings: String, tarBytes: Int) -> String {
        var json = JSONWriter()
        json.add("shard", names.number)
        json.add("tar", names.tar)
        stats.write(to: &json)
        let end = Date().timeIntervalSince1970
        json.add("duration", Self.milliseconds(monotonicSeconds() - startedMonotonic))
        json.add("start_time", Self.milliseconds(startedAt.timeIntervalSince1970))
        json.add("end_time", Self.milliseconds(end))
        json.add("tar_bytes", tarBytes)
        json.add("input_sha256", inputDigest)
        json.add("settings", settings)
        return json.line
    }

    /// Seconds to the millisecond.
    private static func milliseconds(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }
}
