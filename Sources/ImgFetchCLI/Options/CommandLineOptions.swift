import Glibc
import ImgFetchCore

/// Everything the command line asked for, after parsing and validation, before any file is touched.
///
/// Defaults match `OptionTable`'s (the option defaults in docs/ARCHITECTURE.md), so
/// `OptionParser.parse([])` describes a plain `imgfetch` run that reads URLs from stdin into the
/// current directory.
public struct CommandLineOptions: Sendable, Equatable {
    /// What the invocation should do once parsing succeeded.
    public enum Action: Sendable, Equatable {
        /// Download the lists.
        case run
        /// Print `HelpText.text(for:)` and exit 0.
        case help(HelpTopic)
        /// Print the version and exit 0.
        case version
        /// Print `ManPage.text` (roff) and exit 0.
        case manPage
        /// Print the completion script for a shell and exit 0.
        case completions(CompletionShell)
    }

    /// List files in command-line order; empty means stdin, and `-` names stdin explicitly.
    public var lists: [String] = []
    /// The long names of the options given, for defaults that depend on whether one was
    /// (`--input-format`: the lists' names choose; `--save-as`: a resized dataset is JPEG).
    public var given: Set<String> = []
    /// `--input-format` was given; without it, the lists' names choose (`OptionParser.formatByName`).
    public var inputFormatGiven: Bool { given.contains("input-format") }
    /// Where images go (created if missing); with `-o s3://…`, the local work directory
    /// (`--work-dir`) where files are made before they are uploaded.
    public var outputDirectory = "."
    /// `-o s3://BUCKET/PREFIX`: where finished files and shards are uploaded; nil: a local directory.
    var objectStore: S3Location?
    /// The credentials, region and endpoint of `objectStore`, from the environment.
    var objectStoreAccess: S3Access?
    /// The part size of multipart uploads (`IMGFETCH_S3_PART_SIZE`, bytes).
    var objectStorePartSize = S3Client.defaultPartSize
    /// `--work-dir`: local scratch space. With `-o s3://…` the directory files are made in (nil:
    /// `ObjectStoreOutput.defaultWorkDirectory`); with a local output, where the cache index lives
    /// (nil: the output directory).
    var workDirectory: String?
    /// Simultaneous transfers.
    public var concurrency = library.concurrency
    /// Simultaneous transfers to one host.
    public var perHost = library.perHost
    /// Which pending request starts next.
    public var order = library.order
    /// Seconds without real progress before a transfer is aborted.
    public var timeout = library.timeout
    /// Seconds allowed for the connect phase.
    public var connectTimeout = library.connectTimeout
    /// Hard limit in seconds on a whole transfer, or nil for none.
    public var maxTime: Double?
    /// Retries of transient failures.
    public var retries = library.retries
    /// How the lists are read: their format and, for tables, the URL, caption and key columns.
    var table = TableSettings()
    /// Files in DIR, or WebDataset shards.
    var outputFormat = OutputFormat.files
    /// Rows per shard with `--output-format webdataset`.
    var shardSamples = 10_000
    /// `--shard-prefix`: the start of every shard's names and generated keys; nil: `K-of-N-` under
    /// `--shard`, else nothing (`ShardNames.prefix`).
    var shardPrefix: String?
    /// The part of the lists this process takes (`--shard K/N`, or a cluster's environment); nil: all.
    var shard: ShardSelector?
    /// What `--shard` hashes.
    var shardBy = ShardSelector.Key.url
    /// `--failures-are-data`: exit 0 when only items failed, 75 when a retry may help (`WorkerExit`).
    var failuresAreData = false
    /// `--if-running`: what a run does while another writes the same output (`RunLock`).
    var ifRunning = RunLock.WhenHeld.wait
    /// When this run began to wait for another on its output (`DownloaderConfiguration.freshSince`).
    var freshSince: Double?
    /// Requests per second to one host, or nil for no spacing.
    public var ratePerHost: Double?
    /// Connection failures (or 429/503 answers) in a row before a host's remaining items fail; 0: never.
    public var hostFailureLimit = library.hostFailureLimit
    /// Seconds the whole run may take, or nil for no limit.
    public var deadline: Double?
    /// Extra request headers, each `Name: value`, in command-line order.
    public var headers: [String] = []
    /// The User-Agent header; nil keeps the library's `imgfetch/VERSION (+URL)`.
    public var userAgent: String?
    /// `user:password` for HTTP authentication.
    public var credentials: String?
    /// Cookie file to read and write; cookies are off when nil.
    public var cookieJar: String?
    /// Skip TLS verification.
    public var insecure = false
    /// PEM file of CA certificates to verify TLS peers against instead of the system's.
    public var caCertificateFile: String?
    /// Follow redirects from https to http.
    public var allowDowngrade = false
    /// Which HTTP versions transfers may use (`--http1.1`, `--http2`).
    public var httpVersion = library.httpVersion
    /// `--resolve` entries, `HOST:PORT:ADDR[,ADDR…]`, in command-line order.
    public var resolve: [String] = []
    /// `--netrc` (""), `--netrc-file FILE`: credentials for the hosts a netrc file names.
    public var netrcFile: String?
    /// `--block-private` and `--allow-host`: which addresses image requests may connect to.
    public var addressPolicy = library.addressPolicy
    /// What is written for each image.
    public var saveAs: SaveAsChoice = .original
    /// With decompressed outputs: the longest side after downscaling (`--max-dimension`, the same
    /// as `--resize N --fit keep-ratio-largest`).
    public var maxDimension: Int?
    /// `--resize N`: the side `fit` aims for.
    public var resize: Int?
    /// `--fit`: how `--resize` applies.
    public var fit = Resize.Fit.keepRatioLargest
    /// `--upscale`: enlarge images smaller than `--resize`.
    public var upscale = false
    /// `--background`: what transparency is flattened onto (JPEG) and what `--fit pad` fills with.
    public var background = Resize.Color.white
    /// The quality of `--save-as jpeg` or `webp`, 1-100; nil: the format's default.
    public var quality: Int?
    /// Skip full decoding (bodies are still sniffed).
    public var noDecode = false
    /// `--min-size`, `--max-aspect-ratio`: which images are kept by their size.
    public var filter = ImageFilter()
    /// `--hash`: the digest of the body each sample records (img2dataset's `--compute_hash`).
    public var hash = DigestAlgorithm.sha256
    /// `--verify-hash COLUMN[:ALGORITHM]`: the column each row's body is checked against.
    var verifyHash: HashVerification?
    /// `--extract-exif`: each sample records its image's EXIF.
    public var extractExif = false
    /// Fail images of formats imgfetch cannot decode instead of saving them unverified.
    public var requireVerified = false
    /// Fetch images whose `X-Robots-Tag` opts out.
    public var ignoreOptOut = false
    /// Fetch each host's robots.txt first and skip what it disallows.
    public var robots = false
    /// Largest width × height decoded.
    public var maxPixels = library.decodeLimits.maxPixels
    /// Most memory one image's decode may need (`--max-decode-memory`).
    public var maxDecodeMemory = library.decodeLimits.maxMemory
    /// Largest body accepted, in bytes.
    public var maxSize = library.maxSize
    /// Bytes that must stay free on the output's file system; 0: only a full disk stops the run.
    public var minimumFree = library.minimumFreeSpace
    /// Where file names come from.
    public var naming = library.naming
    /// What happens when the target file already exists.
    public var existingFiles = library.existingFiles
    /// How the output directory's cache index is used.
    public var cachePolicy = library.cachePolicy
    /// Only errors and warnings on stderr: no progress, no summary, no line per failed item.
    public var quiet = false
    /// On a terminal, a line for every item, those left as they were too.
    public var verbose = false
    /// With webdataset: complete shards with failed rows are made again.
    public var retryFailed = false
    /// How progress is shown on stderr.
    public var progress: ProgressMode = .auto
    /// Seconds between two status lines of `--progress plain`.
    public var progressInterval: Double = 10
    /// stdout gets one JSON object per list item instead of a tab-separated line.
    public var jsonl = false
    /// A file that receives the JSON lines too, written as items finish and completed atomically at the end.
    public var reportFile: String?
    /// `--gallery FILE`: an HTML page of the run's images and failures, written at the end.
    public var galleryFile: String?
    /// Run, or print help, the version, the man page or a completion script.
    public var action: Action = .run

    public init() {}

    /// The library's defaults: the options the library shares take theirs from it, so a default
    /// is declared once (the option table's default texts are held to these by a test).
    private static let library = DownloaderConfiguration(outputDirectory: ".")

    /// The library configuration for these options, writing into `outputDirectory`.
    ///
    /// The directory is a parameter, not `self.outputDirectory`, because the caller creates and
    /// resolves it first. `quiet`, `lists` and `action` stay on the CLI side: the downloader
    /// never sees them.
    /// The folder in a work directory that holds the index of the output `directory`:
    /// `index-` and 16 hex digits of the SHA-256 of its real path. One work directory may serve
    /// several outputs, and an index names files relative to its own output only: another
    /// output's entries would take that output's files for cached ones.
    static func indexFolder(for directory: String) -> String {
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let path = realpath(directory, &resolved) != nil
            ? String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : directory
        let hasher = DigestHasher()
        hasher.update(path)
        return "index-" + hasher.finish().prefix(16)
    }

    public func downloaderConfiguration(outputDirectory: String) -> DownloaderConfiguration {
        var configuration = DownloaderConfiguration(outputDirectory: outputDirectory)
        if objectStore == nil, let workDirectory {
            configuration.indexDirectory = OutputPaths.join(workDirectory, Self.indexFolder(for: outputDirectory))
        }
        configuration.freshSince = freshSince
        configuration.concurrency = concurrency
        configuration.perHost = perHost
        configuration.order = order
        configuration.timeout = timeout
        configuration.connectTimeout = connectTimeout
        configuration.maxTime = maxTime
        configuration.retries = retries
        configuration.ratePerHost = ratePerHost
        configuration.hostFailureLimit = hostFailureLimit
        configuration.headers = headers
        if let userAgent { configuration.userAgent = userAgent }
        configuration.credentials = credentials
        configuration.cookieJar = cookieJar
        configuration.insecure = insecure
        configuration.caCertificateFile = caCertificateFile
        configuration.allowDowngrade = allowDowngrade
        configuration.httpVersion = httpVersion
        configuration.resolve = resolve
        configuration.addressPolicy = addressPolicy
        configuration.netrcFile = netrcFile
        configuration.maxSize = maxSize
        configuration.minimumFreeSpace = minimumFree
        configuration.existingFiles = existingFiles
        configuration.cachePolicy = cachePolicy
        configuration.naming = naming
        configuration.saveAs = saveAs.configuration
        configuration.resize = (resize ?? maxDimension).map {
            Resize(size: $0, fit: fit, upscale: upscale, padColor: background)
        }
        configuration.background = background
        configuration.quality = quality
        configuration.verifyImages = !noDecode
        configuration.filter = filter
        if outputFormat == .webdataset {
            configuration.bodyDigests = Set([hash] + (verifyHash.map { [$0.algorithm] } ?? []))
            configuration.extractsExif = extractExif
        }
        configuration.requireVerified = requireVerified
        configuration.ignoresOptOut = ignoreOptOut
        configuration.obeysRobots = robots
        configuration.decodeLimits.maxPixels = maxPixels
        configuration.decodeLimits.maxMemory = maxDecodeMemory
        configuration.hashesEveryBody = galleryFile != nil
        configuration.outputs = outputFormat == .webdataset ? .handedOver : .placed
        return configuration
    }
}

/// `--progress`: how progress is shown on stderr.
public enum ProgressMode: String, Sendable, Equatable, CaseIterable {
    /// A bar when stderr is a terminal (and TERM is not dumb), nothing otherwise.
    case auto
    /// A live bar and rows of active transfers.
    case bar
    /// One status line every `--progress-interval` seconds, for logs.
    case plain
    /// No progress.
    case none
}

/// `--save-as`: the original bytes, or decompressed pixels in one of three formats.
/// What DIR receives (`--output-format`).
enum OutputFormat: String, Sendable, Equatable, CaseIterable {
    /// One file per image, named from its URL.
    case files
    /// Tar shards of samples in list order (`Dataset/`).
    case webdataset
}

public enum SaveAsChoice: String, Sendable, Equatable, CaseIterable {
    case original, png, ppm, pam, jpeg, webp

    var configuration: SaveAs {
        switch self {
        case .original: .original
        case .png: .pixels(.png)
        case .ppm: .pixels(.ppm)
        case .pam: .pixels(.pam)
        case .jpeg: .pixels(.jpeg)
        case .webp: .pixels(.webp)
        }
    }
}

extension CommandLineOptions {
    /// Sets an action other than help: the last one given wins, but never over `--help`, since
    /// asking for help is never a mistake.
    mutating func request(_ action: Action) {
        if case .help = self.action { return }
        self.action = action
    }

    /// `-o DIR`, or `-o s3://BUCKET/PREFIX` (any case of the scheme); the last one given wins.
    mutating func setOutput(_ value: String, spelling: String) throws(UsageError) {
        if let scheme = ValueParser.urlScheme(value) {
            guard scheme == "s3" else {
                throw UsageError(option: spelling, problem: .invalidValue(
                    value, reason: "only s3:// object storage is supported; a local directory has no scheme"))
            }
            switch S3Location.parse(value) {
            case .success(let location): objectStore = location
            case .failure(let error): throw UsageError(option: spelling, problem: .invalidValue(value, reason: error.reason))
            }
        } else {
            objectStore = nil
            outputDirectory = try ValueParser.path(value, for: spelling)
        }
    }
}
