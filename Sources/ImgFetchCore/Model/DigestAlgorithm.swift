import CCrypto

/// A hash of a body: SHA-256 (always taken when bodies are hashed), and MD5 and SHA-512, which
/// datasets name (img2dataset's `--compute_hash` and `--verify_hash`; `--hash`, `--verify-hash`).
public enum DigestAlgorithm: String, CaseIterable, Sendable, Hashable {
    case md5, sha256, sha512

    /// Hex digits of a digest: 32, 64, 128.
    public var hexLength: Int {
        switch self {
        case .md5: 32
        case .sha256: 64
        case .sha512: 128
        }
    }

    /// How people write it: MD5, SHA-256, SHA-512.
    public var displayName: String {
        switch self {
        case .md5: "MD5"
        case .sha256: "SHA-256"
        case .sha512: "SHA-512"
        }
    }

    /// OpenSSL's digest.
    var evp: OpaquePointer? {
        switch self {
        case .md5: EVP_md5()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }
}
