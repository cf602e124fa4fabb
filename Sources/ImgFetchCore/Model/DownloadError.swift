import Glibc

/// Why an item failed: a class that scripts can branch on and a one-line message that people can act on.
public struct DownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// The server answered with a non-2xx status.
        case http
        /// No real progress for `--timeout`, the connect phase took too long, or `--max-time` ran out.
        case timeout
        /// The host name did not resolve.
        case dns
        /// Connection refused or reset, empty reply, HTTP/2 stream errors and other transport failures.
        case network
        /// Certificate or handshake failures.
        case tls
        /// A redirect that was refused: too many, a loop, another scheme, or a downgrade.
        case redirect
        /// The body is larger than `--max-size`.
        case tooLarge = "too-large"
        /// The body is not an image, or not a valid one.
        case notAnImage = "not-an-image"
        /// The body is an image that ends before its last pixel: the server sent a cut-off file.
        case truncated
        /// An image in a format imgfetch cannot decode, with `--require-verified`, or when a filter
        /// (`--min-size`, `--max-aspect-ratio`) needs its size.
        case unverified
        /// The image's shorter side is under `--min-size`.
        case tooSmall = "too-small"
        /// The image's longer side over its shorter is more than `--max-aspect-ratio`.
        case aspectRatio = "aspect-ratio"
        /// The body's digest is not the one the row's `--verify-hash` column gives: the bytes are not kept.
        case hashMismatch = "hash-mismatch"
        /// The output could not be written.
        case filesystem
        /// The output's file system is full (ENOSPC, EDQUOT), or below `--min-free`: the item was
        /// not downloaded, or its output could not be written.
        case diskFull = "disk-full"
        /// The object store (`-o s3://…`) refused the upload or could not be reached, after the retries.
        case storage
        /// `--cache-policy only-if-cached` and the index has no usable entry.
        case notCached = "not-cached"
        /// The list line could not be used.
        case invalidInput = "invalid-input"
        /// Every caller of the item cancelled it.
        case cancelled
        /// The host's circuit breaker tripped: `--host-failures` connection failures in a row.
        case hostUnreachable = "host-unreachable"
        /// The response opted out with `X-Robots-Tag` (noai, noimageai, noindex, noimageindex, none).
        case optOut = "opt-out"
        /// The run's `--deadline` came first.
        case deadline
        /// The address to connect to is not public (`--block-private`), or is the cloud's
        /// instance-metadata address (always): no connection was made (`AddressPolicy`).
        case blocked
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A failed write of `what` with errno `code`: class `disk-full` for ENOSPC and EDQUOT, else
    /// `filesystem`; the message is the OS's ("cannot write cat.jpg: No space left on device").
    public static func writing(_ what: String, _ code: Int32) -> DownloadError {
        DownloadError(isDiskFull(code) ? .diskFull : .filesystem, "cannot write \(what): \(Errno.describe(code))")
    }

    /// Whether errno `code` says the file system has no room: ENOSPC, or EDQUOT (a quota).
    public static func isDiskFull(_ code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }

    /// The error of an item or transfer that was cancelled (Ctrl-C, `cancelAll`, a token).
    public static let cancelled = DownloadError(.cancelled, "cancelled")

    public var description: String { message }
}

extension DownloadError.Kind {
    /// The class a results file of an earlier run names: today's names, and the camelCase ones that
    /// builds before the classes were kebab-case wrote (`notAnImage`); a name unknown to this build
    /// is `invalid-input`.
    public init(storedName name: String) {
        let earlier: [String: Self] = ["tooLarge": .tooLarge, "notAnImage": .notAnImage, "notCached": .notCached,
                                       "invalidInput": .invalidInput, "diskFull": .diskFull,
                                       "hostUnreachable": .hostUnreachable, "optOut": .optOut]
        self = Self(rawValue: name) ?? earlier[name] ?? .invalidInput
    }
}
