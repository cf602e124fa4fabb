import Glibc

/// What `-o s3://BUCKET/PREFIX` adds to a run: the files are made in a local work directory as
/// they would be in a local output (with the cache index and the temp files), and each finished
/// file or shard is uploaded to the object named by its path within that directory.
public struct ObjectStoreOutput: Sendable {
    public let location: S3Location
    public let access: S3Access
    /// The local work directory (`--work-dir`).
    public let workDirectory: String
    public let settings: S3Client.Settings
    /// What the run's requests say of the store: it stops the run when the store refuses its writes or is down.
    public let health = StoreHealth()

    public init(location: S3Location, access: S3Access, workDirectory: String, settings: S3Client.Settings) {
        self.location = location
        self.access = access
        self.workDirectory = workDirectory
        self.settings = settings
    }

    /// The work directory's multipart uploads in progress.
    public var journal: UploadJournal { UploadJournal(workDirectory: workDirectory) }

    /// Incomplete multipart uploads older than this that the journal does not name are reported (another machine's, or a killed run's whose journal is gone).
    static let staleUploadAge = 24 * 3600.0

    /// Aborts the multipart uploads that an earlier run on this work directory left in progress
    /// (killed before it could complete or abort them): those the journal names whose note no
    /// live process holds (`UploadJournal.claim`) and the store still lists under the prefix; a
    /// noted upload of another prefix or bucket, or any when the store does not list, is aborted
    /// by its ID (a 404 says it is gone already). The store's other incomplete uploads under the
    /// prefix are left alone (another process may be making them), but those more than a day old
    /// are counted. Returns the lines to warn with.
    public func abortEarlierUploads(now: Double = Double(time(nil))) -> [String] {
        let journal = journal
        let noted = journal.entries()
        var quick = settings
        quick.connectTimeout = min(settings.connectTimeout, 5)
        quick.timeout = min(settings.timeout, 5)
        let client = S3Client(access: access, settings: quick)
        let prefix = location.prefix.isEmpty ? "" : location.prefix + "/"
        let listed = client.incompleteUploads(bucket: location.bucket, prefix: prefix)
        var lines: [String] = []
        var aborted: [String] = []
        for entry in noted {
            guard let note = journal.claim(uploadID: entry.uploadID) else { continue }  // a live process's
            let covered = entry.bucket == location.bucket && entry.key.utf8.starts(with: prefix.utf8)
            // A listed prefix shows which of its notes are still open; any other note is asked by its ID.
            if covered, let listed, !listed.contains(where: { $0.uploadID == entry.uploadID }) {
                note.remove()
            } else if client.abortUpload(entry) {
                note.remove()
                aborted.append("s3://\(entry.bucket)/\(entry.key)")
            } else {
                lines.append("cannot abort the multipart upload of s3://\(entry.bucket)/\(entry.key) an earlier run left; "
                    + "the next run tries again (its parts cost storage until then)")
            }
        }
        if !aborted.isEmpty {
            lines.append("aborted \(aborted.count) multipart upload\(aborted.count == 1 ? "" : "s") an earlier run left unfinished: "
                + aborted.prefix(3).joined(separator: ", ") + (aborted.count > 3 ? ", …" : ""))
        }
        let ours = Set(noted.map(\.uploadID))
        let stale = (listed ?? []).filter { !ours.contains($0.uploadID) && ($0.initiated.map { now - $0 > Self.staleUploadAge } ?? false) }
        if !stale.isEmpty {
            lines.append("\(location) has \(stale.count) incomplete multipart upload\(stale.count == 1 ? "" : "s") more than a day old "
                + "that \(stale.count == 1 ? "was" : "were") not started from this work directory: they cost storage until aborted; "
                + "a lifecycle rule with AbortIncompleteMultipartUpload removes them (see docs/STORAGE.md)")
        }
        return lines
    }

    /// The object a run writes and deletes before anything else, to learn that it may write: `PREFIX/.imgfetch-write-check`.
    public var writeCheckName: String { ".imgfetch-write-check" }

    /// Why the run should stop before it starts, when no credential source gives keys, the store
    /// says the bucket does not exist or is in another region, or it refuses a write: every item
    /// would be downloaded only to fail its upload. The keys are fetched (and kept for the run),
    /// then one HEAD of the bucket (without retries), then a zero-byte object is put under the
    /// prefix (`writeCheckName`, with the run's retries) and deleted again; a store that refuses
    /// the delete (keys without `s3:DeleteObject`) keeps it, which is no reason to stop. Each
    /// request waits 5 s at most for a connection and between bytes. `temporary` says whether a
    /// later attempt may succeed (no answer, 5xx), as opposed to a refusal.
    public func startProblem() -> (message: String, temporary: Bool)? {
        var quick = settings
        quick.connectTimeout = min(settings.connectTimeout, 5)
        quick.timeout = min(settings.timeout, 5)
        let client = S3Client(access: access, settings: quick)
        // The keys first: a source that gives none stops the run here, with what was tried.
        do {
            _ = try client.credentials()
        } catch {
            return ("\(location): \(error.message)", !error.message.hasPrefix("no AWS credentials"))
        }
        switch client.checkBucket(location.bucket) {
        case .missing:
            return ("\(location): no such bucket at \(access.endpoint ?? "AWS (\(access.region))") "
                + "(check the bucket's name, AWS_ENDPOINT_URL and AWS_REGION)", false)
        case .inRegion(let region):
            return ("\(location): the bucket is in region \(region), not \(access.region) (set AWS_REGION=\(region))", false)
        case .exists, .unknown:
            break
        }
        let health = StoreHealth()
        let writer = S3Client(access: access, settings: quick, health: health)
        let key = location.key(writeCheckName)
        do {
            try writer.put(bytes: [], bucket: location.bucket, key: key, contentType: "application/octet-stream")
        } catch {
            let refused = health.stopError != nil
            return ("\(location): the store \(refused ? "refuses" : "did not take") a first write, so nothing is downloaded: \(error.message)",
                    !refused)
        }
        _ = try? writer.delete(bucket: location.bucket, key: key)
        return nil
    }

    /// `$TMPDIR/imgfetch-s3/BUCKET/PREFIX` (TMPDIR defaults to /tmp): the same place for the same
    /// output, so a re-run on the machine finds its cache index.
    public static func defaultWorkDirectory(for location: S3Location, environment: [String: String]) -> String {
        var temp = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while temp.count > 1 && temp.hasSuffix("/") { temp.removeLast() }
        return OutputPaths.join(OutputPaths.join(temp, "imgfetch-s3"), location.prefix.isEmpty ? location.bucket : location.bucket + "/" + location.prefix)
    }

    /// The object name of the local file `path` in the work directory (`WORKDIR/a/b.jpg` → `a/b.jpg`); nil for a path outside it.
    public func name(ofLocal path: String) -> String? {
        // By bytes: a Character comparison would take "/" plus a combining mark for another character.
        if workDirectory == "." { return path.utf8.starts(with: "/".utf8) || path.utf8.starts(with: "../".utf8) ? nil : path }
        let base = Array((workDirectory.hasSuffix("/") ? workDirectory : workDirectory + "/").utf8)
        let bytes = Array(path.utf8)
        guard bytes.count > base.count, bytes.starts(with: base) else { return nil }
        return String(decoding: bytes[base.count...], as: UTF8.self)
    }

    /// The `Content-Type` an object is stored with, by its name's extension.
    public static func contentType(of name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        case "avif": return "image/avif"
        case "tif", "tiff": return "image/tiff"
        case "bmp": return "image/bmp"
        case "ppm", "pam": return "image/x-portable-anymap"
        case "tar": return "application/x-tar"
        case "json": return "application/json"
        case "jsonl": return "application/x-ndjson"
        default: return "application/octet-stream"
        }
    }
}
