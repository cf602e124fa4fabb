import ImgFetchCore

/// What `-o s3://BUCKET/PREFIX` adds to a run: the files are made in a local work directory as
/// they would be in a local output (with the cache index and the temp files), and each finished
/// file or shard is uploaded to the object named by its path within that directory.
struct ObjectStoreOutput: Sendable {
    let location: S3Location
    let access: S3Access
    /// The local work directory (`--work-dir`).
    let workDirectory: String
    let settings: S3Client.Settings

    init?(_ options: CommandLineOptions) {
        guard let location = options.objectStore, let access = options.objectStoreAccess else { return nil }
        self.location = location
        self.access = access
        workDirectory = options.outputDirectory
        let configuration = options.downloaderConfiguration(outputDirectory: options.outputDirectory)
        settings = S3Client.Settings(retry: RetryPolicy(maxRetries: options.retries), connectTimeout: options.connectTimeout,
                                     timeout: options.timeout, userAgent: configuration.userAgent)
    }

    /// `$TMPDIR/imgfetch-s3/BUCKET/PREFIX` (TMPDIR defaults to /tmp): the same place for the same
    /// output, so a re-run on the machine finds its cache index.
    static func defaultWorkDirectory(for location: S3Location, environment: [String: String]) -> String {
        var temp = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while temp.count > 1 && temp.hasSuffix("/") { temp.removeLast() }
        return OutputPaths.join(OutputPaths.join(temp, "imgfetch-s3"), location.prefix.isEmpty ? location.bucket : location.bucket + "/" + location.prefix)
    }

    /// The object name of the local file `path` in the work directory (`WORKDIR/a/b.jpg` → `a/b.jpg`); nil for a path outside it.
    func name(ofLocal path: String) -> String? {
        if workDirectory == "." { return path.hasPrefix("/") || path.hasPrefix("../") ? nil : path }
        let base = workDirectory.hasSuffix("/") ? workDirectory : workDirectory + "/"
        guard path.hasPrefix(base), path.count > base.count else { return nil }
        return String(path.dropFirst(base.count))
    }

    /// The `Content-Type` an object is stored with, by its name's extension.
    static func contentType(of name: String) -> String {
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
