import Glibc

/// A shard an earlier run completed: its stats file's input digest and settings, and its tar is
/// still there, of the size the stats file says. Its results file says which rows failed: a
/// re-run reports those as failed again, with the first run's error and HTTP status, not as
/// skipped in a tar they are not in; the others are reported skipped, with what the run that
/// made them reported (`DownloadResult.made`) and their image. A shard with a row that failed for want of disk (class
/// `filesystem` or `storage`) is not finished: a re-run fetches it again, as a worker retried after
/// exit 75 must. With `-o s3://…` the shard's objects are read, never the work directory.
public struct FinishedShard: Equatable {
    /// A row that failed, as the results file has it.
    public struct Failure: Equatable, Sendable {
        public let error: DownloadError
        public let httpStatus: Int?
        /// The body's size and image, when it had one (a row refused by a filter, or undecodable).
        public var bytes: Int64 = 0
        public var format: ImageFormat?
        public var image: ImageInfo?
    }

    /// A row that did not fail, as the results file has it: what the run that made it reported,
    /// and the sample's image.
    public struct Made: Equatable, Sendable {
        public let outcome: DownloadResult.EarlierOutcome
        public let format: ImageFormat?
        public let image: ImageInfo?
        /// Why a row that was skipped then (robots.txt) was not fetched.
        public var skipReason: String?
    }

    public let digest: String
    public let settings: String
    /// The rows that failed, by row number in the shard.
    public let failures: [Int: Failure]
    /// The other rows, by row number in the shard.
    public let made: [Int: Made]
    /// The counts its stats file holds (for the dataset's `stats.json`); nil when they do not read.
    public var stats: ShardStats?

    /// Most bytes of a results file read back (about 100,000 rows).
    static let resultsLimit = 64 << 20

    /// Reads shard `shard`'s stats in `directory`; nil when the shard is not complete there.
    public static func read(shard: Int, in directory: String, prefix: String = "") -> FinishedShard? {
        read(ShardNames(shard: shard, prefix: prefix), tar: { name in
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return S3Client.ObjectInfo(size: Int(info.st_size), etag: nil)
        }, contents: { name, limit in contents(of: directory + "/" + name, limit: limit).map { ($0, nil) } })
    }

    /// Reads shard `shard`'s stats in the object store (`-o s3://…`) through `client`; nil when
    /// the shard is not complete there, or the store cannot say (then the shard is made again).
    public static func read(shard: Int, in store: ObjectStoreOutput, client: S3Client, prefix: String = "") -> FinishedShard? {
        let bucket = store.location.bucket
        return read(ShardNames(shard: shard, prefix: prefix), tar: { name in
            (try? client.head(bucket: bucket, key: store.location.key(name))) ?? nil
        }, contents: { name, limit in (try? client.get(bucket: bucket, key: store.location.key(name), limit: limit)) ?? nil })
    }

    /// Whether an object's entity tag is the one its stats object recorded (none recorded: the
    /// store gave none, and the size has the say). Compared without quotes and weak markers.
    private static func matches(_ recorded: String?, _ actual: String?) -> Bool {
        recorded == nil || S3Client.plainTag(recorded) == S3Client.plainTag(actual)
    }

    /// The shard `names` as `tar` (the tar's size and entity tag, nil when there is none) and
    /// `contents` (a file's bytes up to a limit, and its entity tag) find it: complete when its
    /// stats, results and tar agree. A stats object that names the ETags of its tar and results
    /// (`tar_etag`, `results_etag`: `ShardUpload`) vouches only for objects with those ETags.
    private static func read(_ names: ShardNames, tar: (String) -> S3Client.ObjectInfo?,
                             contents: (String, Int) -> (bytes: [UInt8], etag: String?)?) -> FinishedShard? {
        guard let bytes = contents(names.stats, 1 << 20)?.bytes,
              let members = try? JSONObjectScanner.members(of: bytes) else { return nil }
        func value(_ key: String) -> String? { members.first { $0.key == key }?.value }
        guard let digest = value("input_sha256").flatMap(JSONObjectScanner.string),
              let settings = value("settings").flatMap(JSONObjectScanner.string),
              let info = tar(names.tar), value("tar_bytes") == String(info.size),
              matches(value("tar_etag").flatMap(JSONObjectScanner.string), info.etag),
              let rows = value("rows").flatMap({ Int($0) }),
              let (results, resultsTag) = contents(names.results, resultsLimit),
              matches(value("results_etag").flatMap(JSONObjectScanner.string), resultsTag),
              let (failures, made) = rowResults(in: results, rows: rows),
              !failures.values.contains(where: { $0.error.kind == .filesystem || $0.error.kind == .storage }) else { return nil }
        return FinishedShard(digest: digest, settings: settings, failures: failures, made: made, stats: ShardStats(members: members))
    }

    /// The rows of a results file (a line per row, in row order): those that failed, and the
    /// others; nil when a line is not a result or the file has not `rows` lines.
    static func rowResults(in results: [UInt8], rows: Int) -> (failures: [Int: Failure], made: [Int: Made])? {
        var failures: [Int: Failure] = [:]
        var made: [Int: Made] = [:]
        let lines = results.split(separator: UInt8(ascii: "\n"))
        guard lines.count == rows else { return nil }
        for (row, line) in lines.enumerated() {
            guard let members = try? JSONObjectScanner.members(of: Array(line)) else { return nil }
            func value(_ key: String) -> String? { members.first { $0.key == key }?.value }
            func number(_ key: String) -> Int? { value(key).flatMap { Int($0) } }
            guard let status = value("status").flatMap(JSONObjectScanner.string) else { return nil }
            var image: ImageInfo?
            if let width = number("width"), let height = number("height") {
                image = ImageInfo(width: width, height: height, channels: number("channels") ?? 0, bitDepth: number("bit_depth") ?? 0,
                                  verified: value("verified") == "true")
                image?.outputWidth = number("output_width")
                image?.outputHeight = number("output_height")
            }
            let format = value("format").flatMap(JSONObjectScanner.string).flatMap(ImageFormat.init(rawValue:))
            let bytes = Int64(number("bytes") ?? 0)
            guard status == "failed" else {
                guard let earlier = DownloadResult.Status(rawValue: status) else { return nil }
                made[row] = Made(outcome: DownloadResult.EarlierOutcome(status: earlier, httpStatus: number("http_status"), bytes: bytes),
                                 format: format, image: image, skipReason: value("skip_reason").flatMap(JSONObjectScanner.string))
                continue
            }
            guard let error = value("error"), let fields = try? JSONObjectScanner.members(of: Array(error.utf8)),
                  let kind = fields.first(where: { $0.key == "class" }).flatMap({ JSONObjectScanner.string($0.value) }),
                  let message = fields.first(where: { $0.key == "message" }).flatMap({ JSONObjectScanner.string($0.value) })
            else { return nil }
            failures[row] = Failure(error: DownloadError(DownloadError.Kind(storedName: kind), message),
                                    httpStatus: value("http_status").flatMap { Int($0) }, bytes: bytes, format: format, image: image)
        }
        return (failures, made)
    }

    /// The file's bytes, if it is a regular file of at most `limit` bytes.
    static func contents(of path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { FileDescriptorIO.read(fd, into: $0, at: 0) }
        return count == bytes.count ? bytes : nil
    }
}
