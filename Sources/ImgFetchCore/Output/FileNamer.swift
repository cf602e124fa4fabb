/// Gives every URL of a run its file name, following the naming rules in docs/ARCHITECTURE.md.
///
/// Names come from the original URL (never a redirect target or a header) and are reduced to a
/// safe basename: never `..`, never a separator, never a dot-file, never empty. When two different
/// URLs want one name, the later one in the list gets `-` and 8 hex digits of its URL's SHA-256, so
/// the same list gives the same names on every run (16 digits, then all 64, in the rare case that
/// another URL holds that name too). A value type with no lock of its own: `ImageDownloader`
/// keeps it behind a `Mutex`, so names are given in call order.
public struct FileNamer {
    /// Where names come from.
    public enum Scheme: String, Sendable, CaseIterable {
        /// The URL's last path segment.
        case url
        /// The hex SHA-256 of the normalized URL.
        case hash
    }

    /// Longest stem kept, in UTF-8 bytes, leaving room for a suffix and an extension under NAME_MAX (255).
    public static let maxStemBytes = 200
    /// Longest `out=` name, leaving room for the 9-byte disambiguation suffix under NAME_MAX (255).
    public static let maxExplicitBytes = 240
    /// Hex digits of the URL's SHA-256 in a disambiguating suffix: 8, or more when another URL holds that name.
    static let suffixLengths = [8, 16, 64]

    public let scheme: Scheme
    /// Claimed names → hash of the URL that claimed them, in a file (`NameClaims`), so that the
    /// claims of a list of any length take no memory. Names are keyed by a 64-bit FNV-1a hash of
    /// their lowercased stem (case-insensitive file systems are safe too) and URLs by their hash:
    /// FNV keeps the keys the same on every run, and a false match (odds about n²/2⁶⁵) would only
    /// add a suffix.
    private let claims: NameClaims

    /// A namer whose claims live in a file in `claimsDirectory` (the index's folder, or the output directory).
    public init(scheme: Scheme, claimsDirectory: String) throws(DownloadError) {
        self.scheme = scheme
        claims = try NameClaims(directory: claimsDirectory)
    }

    /// The name for `url`, or for the list's explicit `out=` name, claimed for this run. Throws
    /// when the claims file cannot be read or written (class `disk-full` when its disk is full).
    public mutating func name(for url: ParsedURL, explicitName: String? = nil) throws(DownloadError) -> OutputName {
        let base: OutputName
        if let explicitName {
            base = OutputName(stem: Self.sanitize(explicitName, maxBytes: Self.maxExplicitBytes), givenExtension: nil, isExplicit: true)
        } else if scheme == .hash {
            return OutputName(stem: SHA256.hexDigest(url.normalized), givenExtension: nil, isExplicit: false)
        } else {
            base = Self.split(Self.sanitize(url.lastPathSegment))
        }
        let identity = Int64(url.normalized.hashValue)
        guard case .heldBy = try claims.claim(Self.fnv1a(Self.claimKey(base)), for: identity) else { return base }
        var name = base
        for length in Self.suffixLengths {
            name = Self.disambiguate(base, for: url, digits: length)
            if try claims.claim(Self.fnv1a(Self.claimKey(name)), for: identity) == .claimed { return name }
        }
        // Another URL with this URL's whole SHA-256 in its name: take the name over, as before.
        try claims.assign(Self.fnv1a(Self.claimKey(name)), to: identity)
        return name
    }

    /// The key two names collide on: lowercased, without an image extension, so `out=cat.jpg`
    /// and a URL's `cat` (which may become `cat.jpg`) collide, as do `A.jpg` and `a.png`.
    static func claimKey(_ name: OutputName) -> String {
        (name.isExplicit ? split(name.stem).stem : name.stem).lowercased()
    }

    /// 64-bit FNV-1a: a stable hash (Swift's `Hasher` is seeded per process).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// A safe basename: separators and control characters become `_`, leading dots go, never empty, never too long.
    public static func sanitize(_ raw: String, maxBytes: Int = maxStemBytes) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            let forbidden = scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F
            scalars.append(forbidden ? "_" : scalar)
        }
        var name = Substring(String(scalars))
        // ". ." must not survive as ".": drop dots and spaces at the front until neither is left.
        while let first = name.first, first == "." || first.isWhitespace { name.removeFirst() }
        while let last = name.last, last.isWhitespace { name.removeLast() }
        name = prefix(name, maxBytes: maxBytes)
        return name.isEmpty ? "image" : String(name)
    }

    /// The longest prefix of `text` of whole characters within `maxBytes` UTF-8 bytes.
    static func prefix(_ text: Substring, maxBytes: Int) -> Substring {
        guard text.utf8.count > maxBytes else { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let length = text[index].utf8.count
            if bytes + length > maxBytes { break }
            bytes += length
            end = text.index(after: index)
        }
        return text[..<end]
    }

    /// Splits an image extension off a sanitized URL name (`cat.JPG` → stem `cat`, extension `JPG`).
    static func split(_ name: String) -> OutputName {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let ext = String(name[name.index(after: dot)...])
            if ImageFormat.allImageExtensions.contains(ext.lowercased()) {
                return OutputName(stem: String(name[..<dot]), givenExtension: ext, isExplicit: false)
            }
        }
        return OutputName(stem: name, givenExtension: nil, isExplicit: false)
    }

    static func disambiguate(_ name: OutputName, for url: ParsedURL, digits: Int = 8) -> OutputName {
        let suffix = "-" + SHA256.hexDigest(url.normalized).prefix(digits)
        // The 8-digit suffix fits beside the longest stem; a longer one takes its extra bytes off
        // the stem, so that the name stays under NAME_MAX.
        let room = (name.isExplicit ? maxExplicitBytes : maxStemBytes) - (digits - 8)
        guard name.isExplicit, let dot = name.stem.lastIndex(of: "."), dot != name.stem.startIndex else {
            return OutputName(stem: prefix(Substring(name.stem), maxBytes: room) + suffix, givenExtension: name.givenExtension,
                              isExplicit: name.isExplicit)
        }
        // `out=x.jpg` → `x-1a2b3c4d.jpg`: the suffix goes before the extension the user chose.
        let ext = name.stem[dot...]
        return OutputName(stem: prefix(name.stem[..<dot], maxBytes: max(0, room - ext.utf8.count)) + suffix + ext,
                          givenExtension: nil, isExplicit: true)
    }
}
