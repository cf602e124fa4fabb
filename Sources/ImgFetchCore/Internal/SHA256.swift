import CCrypto

/// SHA-256 through OpenSSL's libcrypto; crypto is never hand-written here.
enum SHA256 {
    static func hexDigest(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = text.utf8CString.withUnsafeBufferPointer { buffer in
            // utf8CString includes the terminating NUL, which is not part of the text.
            EVP_Digest(buffer.baseAddress, buffer.count - 1, &digest, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1, "EVP_Digest(SHA-256) failed")
        return hex(digest.prefix(Int(length)))
    }

    /// SHA-256 of the whole file `path`, read through `fd` from its start.
    static func hexDigest(ofFile fd: Int32, path: String) throws(DownloadError) -> String {
        let hasher = DigestHasher()
        if let code = FileDescriptorIO.forEachChunk(of: fd, chunkSize: 256 << 10, { hasher.update($0); return true }) {
            throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe(code))")
        }
        return hasher.finish()
    }

    /// SHA-256 of `length` bytes of the file from `offset`.
    static func hexDigest(ofRange fd: Int32, offset: Int, length: Int, path: String) throws(DownloadError) -> String {
        let hasher = DigestHasher()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var done = 0
        while done < length {
            let count = FileDescriptorIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, length - done)]),
                                              at: offset + done)
            guard count > 0 else {
                throw DownloadError(.filesystem, "cannot read \(path): \(count < 0 ? Errno.describe() : "it got shorter")")
            }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            done += count
        }
        return hasher.finish()
    }

    /// Lowercase hex, built as bytes: one string per digest, not one per byte.
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// A digest (SHA-256 unless told) of a stream fed piece by piece (a body as it arrives, a dataset
/// shard's input rows). Used by one thread at a time.
public final class DigestHasher {
    private let context: OpaquePointer
    public let algorithm: DigestAlgorithm

    public init(_ algorithm: DigestAlgorithm = .sha256) {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        self.context = context
        self.algorithm = algorithm
        reset()
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Starts a new digest, forgetting what was fed.
    public func reset() {
        precondition(EVP_DigestInit_ex(context, algorithm.evp, nil) == 1, "EVP_DigestInit_ex(\(algorithm.displayName)) failed")
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// The hex digest of everything fed since the last reset; the hasher needs a reset before reuse.
    /// Feeds the UTF-8 bytes of `text`.
    public func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    public func finish() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1, "EVP_DigestFinal_ex failed")
        return SHA256.hex(digest.prefix(Int(length)))
    }
}
