import Glibc

/// Writes a POSIX tar archive (ustar headers, a pax extended header for a name over 100 bytes or
/// a size over 8 GiB) to a file, member after member, with fixed headers: mode 0644, uid and gid
/// 0, no user or group names, and the mtime given. The same members give the same bytes, so a
/// shard is reproducible.
///
/// Used by one thread at a time.
final class TarWriter {
    static let blockSize = 512

    private let fd: Int32
    /// What errors call the file (its final name).
    let displayName: String
    /// Bytes written so far.
    private(set) var offset = 0

    init(fd: Int32, displayName: String) {
        self.fd = fd
        self.displayName = displayName
    }

    /// Appends a member of `bytes`.
    func append(name: String, mtime: Int64, bytes: [UInt8]) throws(DownloadError) {
        try append(name: name, size: bytes.count, mtime: mtime) { () throws(DownloadError) in
            if let code = bytes.withUnsafeBytes({ FileDescriptorIO.writeAll(fd, $0) }) {
                throw DownloadError.writing(displayName, code)
            }
        }
    }

    /// Appends a member of `size` bytes that `writeBody` writes to `fd` (at its current offset);
    /// throws if it wrote another count.
    func append(name: String, size: Int, mtime: Int64, writeBody: () throws(DownloadError) -> Void) throws(DownloadError) {
        var pax: [String] = []
        if name.utf8.count > 100 || !name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { pax.append("path=" + name) }
        if size > Self.maxOctal(11) { pax.append("size=\(size)") }
        if !pax.isEmpty {
            let records = Self.paxRecords(pax)
            try writeBytes(Self.header(name: Self.shortName("PaxHeaders/" + name), size: records.count, mtime: mtime, type: "x"))
            try writeBytes(records + Self.padding(records.count))
        }
        try writeBytes(Self.header(name: Self.shortName(name), size: size, mtime: mtime, type: "0"))
        try writeBody()
        offset += size
        guard lseek(fd, 0, SEEK_CUR) == off_t(offset) else {
            throw DownloadError(.filesystem, "cannot write \(displayName): member \(name) is not \(size) bytes long")
        }
        try writeBytes(Self.padding(size))
    }

    /// The end of the archive: two zero blocks.
    func finish() throws(DownloadError) {
        try writeBytes([UInt8](repeating: 0, count: 2 * Self.blockSize))
    }

    private func writeBytes(_ bytes: [UInt8]) throws(DownloadError) {
        guard !bytes.isEmpty else { return }
        if let code = bytes.withUnsafeBytes({ FileDescriptorIO.writeAll(fd, $0) }) {
            throw DownloadError.writing(displayName, code)
        }
        offset += bytes.count
    }

    // MARK: - Headers

    /// The largest number `digits` octal digits hold.
    static func maxOctal(_ digits: Int) -> Int { (1 << (3 * digits)) - 1 }

    /// Zero bytes up to the next block boundary after `count` bytes.
    static func padding(_ count: Int) -> [UInt8] {
        [UInt8](repeating: 0, count: (blockSize - count % blockSize) % blockSize)
    }

    /// At most 100 bytes of `name`, cut at a character boundary (the pax record has the whole name).
    static func shortName(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in name.unicodeScalars {
            let encoded = Array(String(character).utf8)
            guard bytes.count + encoded.count <= 100 else { break }
            bytes += encoded.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "_") }
        }
        return bytes
    }

    /// pax records, each `LENGTH KEY=VALUE\n` with LENGTH counting itself.
    static func paxRecords(_ records: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for record in records {
            let body = " " + record + "\n"
            var length = body.utf8.count + 1
            while String(length).utf8.count + body.utf8.count != length { length += 1 }
            out += Array((String(length) + body).utf8)
        }
        return out
    }

    /// One ustar header block.
    static func header(name: [UInt8], size: Int, mtime: Int64, type: Character) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: blockSize)
        func put(_ bytes: [UInt8], at offset: Int) {
            for (i, byte) in bytes.enumerated() { block[offset + i] = byte }
        }
        func octal(_ value: Int, digits: Int) -> [UInt8] {
            let text = String(min(max(0, value), maxOctal(digits)), radix: 8)
            return Array((String(repeating: "0", count: max(0, digits - text.utf8.count)) + text).utf8) + [0]
        }
        put(name, at: 0)
        put(octal(0o644, digits: 7), at: 100)
        put(octal(0, digits: 7), at: 108)
        put(octal(0, digits: 7), at: 116)
        put(octal(size, digits: 11), at: 124)
        put(octal(Int(mtime), digits: 11), at: 136)
        put(Array(String(type).utf8), at: 156)
        put(Array("ustar".utf8) + [0], at: 257)
        put(Array("00".utf8), at: 263)
        // The checksum is taken with its own field as eight spaces.
        put([UInt8](repeating: 0x20, count: 8), at: 148)
        let sum = block.reduce(0) { $0 + Int($1) }
        put(octal(sum, digits: 6) + [0x20], at: 148)
        return block
    }
}
