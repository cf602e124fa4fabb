
/// What `-o s3://BUCKET/PREFIX` adds to a run: the files are made in a local work directory as
/// they would be in a local output (with the cache index and the temp files), and each finished
/// file or shard is uploaded to the object named by its path within that directory.
public struct ObjectStoreOutput: Sendable {
    public let location: S3Location
    public let access: S3Access
    /// The local work directory (`--work-dir`).
    public let workDirectory: String
    public let settings: S3Client.Settings

    public init(location: S3Location, access: S3Access, workDirectory: String, settings: S3Client.Settings) {
        self.location = location
        self.access = access
        self.workDirectory = workDirectory
        self.settings = settings
    }

    /// Why the run should stop before it starts, when the store says the bucket does not exist, or
    /// is in another region: every item would be downloaded only to fail its upload. One HEAD of
    /// the bucket, without retries, waiting 5 s at most for a connection; nil when the bucket is
    /// there, or when a store cannot say (keys that may write but not list, or no answer).
    public func bucketProblem() -> String? {
        var quick = settings
        quick.connectTimeout = min(settings.connectTimeout, 5)
        quick.timeout = min(settings.timeout, 5)
        switch S3Client(access: access, settings: quick).checkBucket(location.bucket) {
        case .missing:
            return "\(location): no such bucket at \(access.endpoint ?? "AWS (\(access.region))") "
                + "(check the bucket's name, AWS_ENDPOINT_URL and AWS_REGION)"
        case .inRegion(let region):
            return "\(location): the bucket is in region \(region), not \(access.region) (set AWS_REGION=\(region))"
        case .exists, .unknown:
            return nil
        }
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
