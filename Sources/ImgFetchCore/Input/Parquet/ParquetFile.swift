import Glibc

/// An open Parquet file and its footer: `PAR1`, the column chunks, the `FileMetaData`, its
/// 4-byte little-endian length, and `PAR1` again. The footer is read once; column chunks are read
/// later, a page at a time, with `pread` (the descriptor's offset is never moved).
///
/// The descriptor is owned: `close()` closes it.
final class ParquetFile {
    let descriptor: Int32
    let size: Int64
    let metadata: ParquetMetadata

    /// The longest footer read: LAION's parts have a few kilobytes, files with thousands of row
    /// groups a few megabytes.
    static let maxFooterBytes = 64 << 20

    /// Reads the footer of the open file `descriptor` (taken over: closed on failure too).
    init(descriptor: Int32) throws(ParquetError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            Glibc.close(descriptor)
            throw ParquetError.malformed("cannot stat the file: \(Errno.describe())")
        }
        self.descriptor = descriptor
        size = Int64(info.st_size)
        do throws(ParquetError) {
            guard (info.st_mode & S_IFMT) == S_IFREG else { throw ParquetError.notParquet("not a regular file") }
            guard size >= 12 else { throw ParquetError.notParquet("\(size) bytes, too short for a Parquet file") }
            let head = try Self.read(descriptor, at: 0, count: 4)
            let tail = try Self.read(descriptor, at: size - 8, count: 8)
            guard head == Self.magic, Array(tail[4...]) == Self.magic else {
                throw head == Self.magic ? ParquetError.truncated("its footer (no PAR1 at its end)")
                    : ParquetError.notParquet("no PAR1 at its start")
            }
            let length = Int64(tail[0]) | Int64(tail[1]) << 8 | Int64(tail[2]) << 16 | Int64(tail[3]) << 24
            guard length > 0, length <= size - 12 else { throw ParquetError.malformed("a footer of \(length) bytes in a file of \(size)") }
            guard length <= Self.maxFooterBytes else {
                throw ParquetError.unsupported("a footer of \(length) bytes (over \(Self.maxFooterBytes >> 20) MiB)")
            }
            metadata = try ParquetMetadata(footer: try Self.read(descriptor, at: size - 8 - length, count: Int(length)))
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    func close() {
        Glibc.close(descriptor)
    }

    static let magic: [UInt8] = Array("PAR1".utf8)

    /// `count` bytes at `offset`, all of them, or an error.
    static func read(_ descriptor: Int32, at offset: Int64, count: Int) throws(ParquetError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                if got < 0 { throw ParquetError.malformed("cannot read the file: \(Errno.describe())") }
                throw ParquetError.truncated("\(count) bytes at offset \(offset)")
            }
            done += got
        }
        return buffer
    }
}
