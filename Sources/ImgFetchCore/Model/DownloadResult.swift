/// What happened to one requested item.
public struct DownloadResult: Sendable {
    public enum Status: String, Sendable {
        case saved, skipped, failed, cancelled
    }

    public var status: Status
    /// Files written (saved) or found in place (skipped).
    public var paths: [String] = []
    /// The final HTTP status, when a response arrived.
    public var httpStatus: Int?
    /// The protocol the final response came over, when a response arrived.
    public var httpVersion: HTTPVersion?
    /// Body bytes received.
    public var bytes: Int64 = 0
    /// Bytes written, where they are not the body's (`--save-as` a pixel format): the output file's
    /// size, or the handed-over output's. Nil for original bytes, and for failures.
    public var outputBytes: Int64?
    /// The sniffed image format.
    public var format: ImageFormat?
    /// What the image's header says (size, channels, bit depth) and whether it was fully decoded;
    /// nil for formats imgfetch does not decode.
    public var image: ImageInfo?
    /// Network attempts made (0 when the item never reached the network).
    public var attempts = 0
    /// True when the item shared another request's transfer instead of making its own.
    public var coalesced = false
    /// How the cache index took part: nil when the item never reached it (a failure, or a file
    /// kept by `--skip-existing`).
    public var cache: CacheOutcome?
    /// Body bytes the cache made unnecessary to transfer (fresh, stale or revalidated items).
    public var reusedBytes: Int64 = 0
    /// SHA-256 (hex) of the saved file's bytes, when it is known without reading the file again:
    /// the body's hash, when the original bytes were saved and it was taken (with
    /// `DownloaderConfiguration.hashesEveryBody`, or when the cache index compared it with the
    /// body it stored); nil otherwise, for decompressed outputs, and for files kept by `--skip-existing`.
    public var contentHash: String?
    /// Digests (hex) of the body as it was received, whatever was saved of it: SHA-256 and
    /// `DownloaderConfiguration.bodyDigests`; set with `DownloaderConfiguration.outputs` `.handedOver`.
    public var bodyDigests: [DigestAlgorithm: String] = [:]
    /// SHA-256 (hex) of the body as it was received (`bodyDigests`).
    public var bodySHA256: String? { bodyDigests[.sha256] }
    /// The body's EXIF as a JSON object's text, exifread's keys and printable values (`{}` for an
    /// image without EXIF); set with `DownloaderConfiguration.extractsExif` and `.handedOver` outputs.
    public var exif: String?
    /// The response's Last-Modified, in seconds since 1970, when it had a valid one; set with
    /// `DownloaderConfiguration.outputs` `.handedOver`.
    public var lastModified: Int64?
    /// The output, handed over instead of placed (`DownloaderConfiguration.outputs` `.handedOver`):
    /// every caller of one transfer gets the same file. Nil otherwise, and for failures.
    public var handedOver: OutputFile?
    /// Seconds from the request to its result.
    public var duration: Double = 0
    public var error: DownloadError?
    /// Why a skipped item was not fetched, when it was not because its file is already there
    /// (`robots.txt: Disallow: /private/ (User-agent: *)`).
    public var skipReason: String?
    /// A failure, or a skip, that an earlier run decided: nothing was requested for it in this run
    /// (a row of a WebDataset shard completed before).
    public var fromEarlierRun = false
    /// Objects this item's files were uploaded as (`ObjectUploader`): 0 when the store had them already.
    public var uploadedObjects = 0
    /// For an item whose output an earlier run made (a file the cache index has, a row of a shard
    /// completed before): what that run reported for it. Nil otherwise.
    public var made: EarlierOutcome?

    /// What the run that made an item's output reported: its status, final HTTP status and body size.
    public struct EarlierOutcome: Sendable, Equatable {
        public var status: Status
        public var httpStatus: Int?
        public var bytes: Int64

        public init(status: Status, httpStatus: Int?, bytes: Int64) {
            self.status = status
            self.httpStatus = httpStatus
            self.bytes = bytes
        }
    }

    public init(status: Status, paths: [String] = [], error: DownloadError? = nil) {
        self.status = status
        self.paths = paths
        self.error = error
    }

    /// The result of an item whose callers all withdrew.
    public static let cancelled = DownloadResult(status: .cancelled, error: .cancelled)

    public static func failed(_ error: DownloadError, attempts: Int = 0, httpStatus: Int? = nil,
                              httpVersion: HTTPVersion? = nil) -> DownloadResult {
        var result = DownloadResult(status: .failed, error: error)
        result.attempts = attempts
        result.httpStatus = httpStatus
        result.httpVersion = httpVersion
        return result
    }
}
