/// What the cache index knows about one URL: the response it was saved from, and the files in the
/// output directory that hold it.
public struct CacheEntry: Sendable, Equatable {
    /// A file of the output directory that holds this URL's output, as it was when it was written.
    public struct File: Sendable, Equatable {
        public var name: String
        public var size: Int64
        /// Inode and modification time (ns); nil where not recorded. A file replaced or edited since
        /// (even to the same size) no longer matches, so it is never served as this URL's body.
        public var inode: UInt64?
        public var modified: Int64?

        public init(name: String, size: Int64, inode: UInt64? = nil, modified: Int64? = nil) {
            self.name = name
            self.size = size
            self.inode = inode
            self.modified = modified
        }

        public init(name: String, stamp: FileStamp) {
            self.init(name: name, size: stamp.size, inode: stamp.inode, modified: stamp.modified)
        }

        /// True when the file on disk (`stamp`) is still the one recorded.
        public func matches(_ stamp: FileStamp?) -> Bool {
            guard let stamp else { return false }
            return stamp.size == size && (inode.map { $0 == stamp.inode } ?? true)
                && (modified.map { $0 == stamp.modified } ?? true)
        }
    }

    /// The normalized URL.
    public var url: String
    /// The normalized URL of the response after redirects: the one its validators belong to.
    public var finalURL: String
    /// What the files hold (`CacheEntry.outputKind`): entries of another kind are not reused.
    public var kind: String
    public var format: ImageFormat
    public var image: ImageInfo?
    public var headers: ResponseCacheHeaders
    public var freshness: CacheFreshness
    /// The body's length in bytes: what a reuse saves.
    public var bodySize: Int64
    /// SHA-256 of the body, hex; empty when none was taken (a first download of original bytes,
    /// whose indexed files are hashed instead if the URL is downloaded again).
    public var contentHash: String
    public var files: [File]

    public init(url: String, finalURL: String? = nil, kind: String, format: ImageFormat, image: ImageInfo?, headers: ResponseCacheHeaders,
                freshness: CacheFreshness, bodySize: Int64, contentHash: String, files: [File]) {
        self.url = url
        self.finalURL = finalURL ?? url
        self.kind = kind
        self.format = format
        self.image = image
        self.headers = headers
        self.freshness = freshness
        self.bodySize = bodySize
        self.contentHash = contentHash
        self.files = files
    }

    public var directives: CacheDirectives { headers.directives }

    /// True while the entry may be reused without asking the server: within its freshness
    /// lifetime and not marked no-cache.
    public func isFresh(now: Double) -> Bool {
        !directives.noCache && freshness.isFresh(now: now)
    }

    /// True when a conditional request can revalidate the entry.
    public var hasValidators: Bool { !headers.validators.isEmpty }

    public func owns(_ name: String) -> Bool { files.contains { $0.name == name } }

    public var fileNames: Set<String> { Set(files.map(\.name)) }

    /// The kind of output a configuration writes: entries written as something else are not reused.
    static func outputKind(for configuration: DownloaderConfiguration) -> String {
        switch configuration.saveAs {
        case .original: "original"
        case .pixels(let format):
            // A lossy output's quality is part of what the file holds.
            (format.defaultQuality.map { "\(format.rawValue)@q\(configuration.quality ?? $0)" } ?? format.rawValue)
                + (configuration.resize?.outputKindSuffix ?? "")
                // What JPEG flattens transparency onto; black was the only one before --background.
                + (format == .jpeg && configuration.background != .black ? ":on-" + configuration.background.hex : "")
        }
    }
}

/// What identifies a regular file's current content cheaply: its size, inode and modification time.
public struct FileStamp: Sendable, Equatable {
    public var size: Int64
    public var inode: UInt64
    public var modified: Int64

    public init(size: Int64, inode: UInt64, modified: Int64) {
        self.size = size
        self.inode = inode
        self.modified = modified
    }
}
