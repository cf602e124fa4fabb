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
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
