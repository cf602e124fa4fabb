import FoundationEssentials
import Glibc

/// Everything an `ImageDownloader` needs to know before its first download.
///
/// Defaults are the command line's (the option defaults in docs/ARCHITECTURE.md), which follow
/// SDWebImageDownloader where it has one: a 15 s timeout, 6 connections per host.
public struct DownloaderConfiguration: Sendable {
    /// The version string reported by `--version` and sent in the default User-Agent. A release
    /// built from a tree with uncommitted changes says so (`Scripts/package` defines
    /// `IMGFETCH_DIRTY_TREE`), as its package's version does.
    public static let version = "0.1.0" + buildMark
    #if IMGFETCH_DIRTY_TREE
    private static let buildMark = "+dirty"
    #else
    private static let buildMark = ""
    #endif

    /// Directory that receives temp files and finished images. Must exist.
    public var outputDirectory: String
    /// Directory whose `.imgfetch` folder holds the cache index; nil: `outputDirectory`. Local
    /// scratch space for an output on a network file system, where SQLite's WAL cannot live.
    public var indexDirectory: String?
    /// Bytes that must stay free on the output's file system (`--min-free`): below them no new
    /// transfer starts and the remaining items fail with class `disk-full`; 0 looks only for a full disk.
    public var minimumFreeSpace: Int64 = 64 << 20
    /// Simultaneous transfers (and libcurl's total connection limit).
    public var concurrency = 16
    /// Connections to one host (libcurl's per-host connection limit). A host that answers over
    /// HTTP/2 runs up to `streamsPerConnection` transfers on each; one that does not, one per connection.
    public var perHost = 6
    /// Which HTTP versions transfers may use.
    public var httpVersion: HTTPVersionPreference = .automatic
    /// `HOST:PORT:ADDR[,ADDR…]` entries that name addresses for host names without asking DNS
    /// (libcurl's `CURLOPT_RESOLVE`, curl's `--resolve`).
    public var resolve: [String] = []
    /// Which pending request starts next.
    public var order: ExecutionOrder = .fifo
    /// Seconds without real progress (under 1 KB/s) before a transfer is aborted; SDWebImage's `downloadTimeout`.
    public var timeout: Double = 15
    /// Seconds allowed for the connect phase.
    public var connectTimeout: Double = 10
    /// Hard limit in seconds on one whole transfer attempt, or nil for none.
    public var maxTime: Double?
    /// Retries of transient failures.
    public var retries = 2
    /// Which addresses image requests may connect to (`--block-private`, `--allow-host`); the
    /// instance-metadata addresses are refused even by the default.
    public var addressPolicy = AddressPolicy()
    /// Extra request headers, each `Name: value`.
    public var headers: [String] = []
    /// Where the default User-Agent tells site operators to read about imgfetch. The project has
    /// no home page yet: `.invalid` (RFC 2606) marks the URL as a placeholder that never resolves.
    public static let projectURL = "https://imgfetch.invalid/"
    /// The product token robots.txt groups and `X-Robots-Tag` directives are matched against.
    public static let productToken = "imgfetch"
    /// The default User-Agent: the product, its version and where to read about it.
    public static let defaultUserAgent = "\(productToken)/\(version) (+\(projectURL))"
    /// The User-Agent header.
    public var userAgent = DownloaderConfiguration.defaultUserAgent
    /// `user:password` for HTTP authentication, sent only to the request's own origin.
    public var credentials: String?
    /// Credentials from a netrc file for the hosts it names (`--netrc`, `--netrc-file`): nil off;
    /// "" the user's `~/.netrc`, as libcurl finds it; else the file. `credentials` come first.
    public var netrcFile: String?
    /// Cookie file read at start and written at the end; cookies are off when nil.
    public var cookieJar: String?
    /// Skip TLS certificate and host name verification.
    public var insecure = false
    /// PEM file of the CA certificates that TLS peers are verified against, instead of the system's
    /// (libcurl's `CURLOPT_CAINFO`, curl's `--cacert`); nil keeps the system's.
    public var caCertificateFile: String?
    /// Follow redirects from https to http.
    public var allowDowngrade = false
    /// Largest body accepted, in bytes.
    public var maxSize: Int64 = 64 << 20
    /// What is written: the verified original bytes, or decompressed pixels.
    public var saveAs: SaveAs = .original
    /// With decompressed outputs: how they are sized (`--resize`, `--max-dimension`); nil keeps the size.
    public var resize: Resize?
    /// The quality of a lossy output (`--save-as jpeg`), 1-100; nil: the format's default.
    public var quality: Int?
    /// What transparent pixels are composited onto where the output has no alpha (JPEG); white,
    /// as img2dataset and most thumbnailers flatten. (`--fit pad` fills with `Resize.padColor`,
    /// which the command line sets from the same `--background`.)
    public var background = Resize.Color.white
    /// Decode every image of a decodable format fully (every frame) before saving it (`--no-decode`
    /// turns this off; bodies are still sniffed).
    public var verifyImages = true
    /// Fail images of formats imgfetch cannot decode (SVG, ICO, JPEG XL, HEIC) instead of saving
    /// them unverified (`--require-verified`).
    public var requireVerified = false
    /// Digests of every body besides its SHA-256, with `outputs` `.handedOver` (`DownloadResult.bodyDigests`):
    /// what a dataset records (`--hash`) or checks against a column (`--verify-hash`).
    public var bodyDigests: Set<DigestAlgorithm> = []
    /// Read each body's EXIF into `DownloadResult.exif`, with `outputs` `.handedOver` (`--extract-exif`).
    public var extractsExif = false
    /// Which images are kept by their size (`--min-size`, `--max-aspect-ratio`); the rest fail
    /// (class `too-small`, `aspect-ratio`) before they are decoded.
    public var filter = ImageFilter()
    /// What the decoder refuses before allocating (`--max-pixels` and friends).
    public var decodeLimits = DecodeLimits()
    /// Where file names come from when a request gives none.
    public var naming: FileNamer.Scheme = .url
    /// Shortest interval between two progress events of one transfer, in seconds (the last event is always delivered).
    public var progressInterval = 0.1
    /// What happens when the final path already exists.
    public var existingFiles: ExistingFilePolicy = .skip
    /// How the output directory's cache index decides between reuse, revalidation and download.
    public var cachePolicy: CachePolicy = .protocol
    /// Responses the index received at or after this time (seconds since the epoch) are fresh for
    /// this run, unless marked no-cache: set by a run that waited for another on the same output,
    /// so the URLs that run fetched meanwhile are not asked for again. Nil: freshness as HTTP says.
    public var freshSince: Double?
    /// Keep a cache index in `DIR/.imgfetch/`; without it every item is downloaded (`cachePolicy` is ignored).
    public var keepsCacheIndex = true
    /// Take every downloaded body's SHA-256 (`DownloadResult.contentHash`), not only where the
    /// cache index needs it; `--gallery` names its thumbnails by it.
    public var hashesEveryBody = false
    /// Where verified outputs go: placed in the output directory, or handed to their callers.
    public var outputs = Outputs.placed
    /// Receives warnings that concern the whole run, not one item (e.g. a damaged cache index was replaced).
    public var onWarning: (@Sendable (String) -> Void)?
    /// Bodies that may wait for (or be in) the decode stage before the engine stops admitting
    /// transfers; nil: 32, or half of `concurrency` when that is more.
    public var decodeBacklog: Int?
    /// The decode backlog this configuration runs with. At `-j 1000` the first thousand transfers
    /// end within a tenth of a second of each other; a backlog of 32 then held the next wave back
    /// until the decode stage had written the first (2000 JPEGs over 250 hosts: the run's active
    /// transfers fell from 1000 to 205 between the waves). Memory stays bounded: bodies held in
    /// memory share `HeldBodyBudget`, the rest wait in their temp files.
    public var effectiveDecodeBacklog: Int { max(1, decodeBacklog ?? max(32, concurrency / 2)) }
    /// Threads of the decode stage; nil: one per core when images are decoded, one when they are not
    /// (`verifyImages` off and original bytes saved), since the stage then only sniffs headers and
    /// writes files, and a second thread brought more hand-offs than work (2000 small images with
    /// `--no-decode`: 0.41 -> 0.38 s, median of 10 alternating runs).
    public var decodeThreads: Int?
    /// The number of decode threads this configuration runs.
    var effectiveDecodeThreads: Int {
        if let decodeThreads { return max(1, decodeThreads) }
        let decodes = verifyImages || saveAs != .original
        return decodes ? max(1, ProcessInfo.processInfo.activeProcessorCount) : 1
    }
    /// The retry schedule.
    public var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: retries) }
    /// Fetch images whose response opts out with `X-Robots-Tag` (`--ignore-opt-out`); by default
    /// they fail with class `opt-out` before their body is read.
    public var ignoresOptOut = false
    /// Fetch each host's robots.txt first and skip the URLs it disallows for imgfetch (`--robots`).
    public var obeysRobots = false
    /// Requests per second to one host (`--rate-per-host`); nil: as fast as the connection caps allow.
    public var ratePerHost: Double?
    /// Connection failures in a row (or 429/503 answers in a row) after which a host's remaining
    /// items fail at once (`--host-failures`); 0: never.
    public var hostFailureLimit = 5
    /// Told on the engine thread when a host that asked to slow down (429, 503) is paused: the
    /// host (an origin) and the pause in seconds. Must not block.
    public var onHostPaused: (@Sendable (String, Double) -> Void)?
    /// The hosts' rates, pauses and breakers.
    var hostPolicy: HostGates.Policy {
        HostGates.Policy(rate: ratePerHost, pauseCap: retryPolicy.retryAfterCap, basePause: retryPolicy.baseDelay,
                         failureLimit: hostFailureLimit)
    }
    /// An object store's: paused when it asks to slow down (S3's 503 SlowDown), as AWS's SDKs back
    /// off, but neither spaced (`--rate-per-host` is for image hosts) nor ever given up: each
    /// request has its own retries, and a store that failed five times in a row must still take
    /// the uploads that come once it is back.
    var storePolicy: HostGates.Policy {
        HostGates.Policy(rate: nil, pauseCap: retryPolicy.retryAfterCap, basePause: retryPolicy.baseDelay, failureLimit: 0)
    }

    public init(outputDirectory: String) {
        self.outputDirectory = outputDirectory
    }
}

/// The order in which pending requests start.
public enum ExecutionOrder: String, Sendable {
    /// The oldest pending request starts first.
    case fifo
    /// The newest pending request starts first.
    case lifo
}

/// What happens when a file already exists at the final path.
public enum ExistingFilePolicy: String, Sendable {
    case skip
    case overwrite
}

/// What is written for each image (`--save-as`).
public enum SaveAs: Sendable, Equatable {
    /// The verified original bytes.
    case original
    /// Decompressed pixels, EXIF orientation applied.
    case pixels(PixelFormat)

    /// The pixel format, for decompressed outputs.
    public var pixelFormat: PixelFormat? {
        if case .pixels(let format) = self { return format }
        return nil
    }
}

extension DownloaderConfiguration {
    /// Where a downloader's verified outputs go (its `OutputSink`).
    public enum Outputs: Sendable {
        /// Placed under each caller's file name in the output directory, with the cache index
        /// that serves and revalidates them on later runs (`DirectorySink`).
        case placed
        /// Handed to each caller (`DownloadResult.handedOver`), for a writer of its own such as
        /// `DatasetWriter`'s shards (`HandOverSink`). No names are given, no cache index is kept
        /// (`keepsCacheIndex` and `cachePolicy` are ignored), existing files are not looked at,
        /// every body's SHA-256 and `bodyDigests` are taken (`DownloadResult.bodyDigests`), and a URL repeated after
        /// its transfer finished is fetched again (only the callers of one transfer share it).
        case handedOver
    }
}
