import Glibc

/// Reads and whole writes on file descriptors, the one place for their loops: `write(2)` may write
/// less than asked (a signal, a pipe's capacity, a nearly full disk), and either call may fail
/// with EINTR and must then be made again.
public enum FileDescriptorIO {
    /// Writes all of `bytes` to `fd` from its current offset; nil, or the errno of the write that
    /// failed (EIO for one that wrote nothing without an error, which would otherwise loop forever).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        writeAll(bytes) { Glibc.write(fd, $0, $1) }
    }

    /// Writes all of `bytes` to `fd` at `offset` (`pwrite(2)`, which leaves the fd's offset alone).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int32? {
        writeAll(bytes) { start, count in pwrite(fd, start, count, off_t(offset + (start - bytes.baseAddress!))) }
    }

    /// Reads up to `buffer.count` bytes at `offset` (`pread(2)`, which leaves the fd's offset
    /// alone): the count, 0 at the end of the file, or -1 with errno set.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        while true {
            let count = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 || errno != EINTR { return count }
        }
    }

    /// Reads `fd` from its start to its end, `chunkSize` bytes at a time, handing each chunk to
    /// `body` (which returns false to stop early); nil, or the errno of the read that failed.
    public static func forEachChunk<E: Error>(of fd: Int32, chunkSize: Int,
                                              _ body: (UnsafeRawBufferPointer) throws(E) -> Bool) throws(E) -> Int32? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while true {
            let count = read(fd, into: buffer, at: offset)
            if count < 0 { return errno }
            if count == 0 { return nil }
            guard try body(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else { return nil }
            offset += count
        }
    }

    /// The bytes of the small file at `path` (a token, a config file): nil when there is no such
    /// file; an error (as text, naming the path) when it cannot be read or is over `limit` bytes.
    package static func readSmallFile(_ path: String, limit: Int) -> Result<[UInt8], ReadFailure>? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            return errno == ENOENT ? nil : .failure(ReadFailure(reason: "cannot read \(path): \(Errno.describe())"))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        let failed = forEachChunk(of: fd, chunkSize: 64 << 10) { chunk in
            bytes.append(contentsOf: chunk)
            return bytes.count <= limit
        }
        if let failed { return .failure(ReadFailure(reason: "cannot read \(path): \(Errno.describe(failed))")) }
        if bytes.count > limit { return .failure(ReadFailure(reason: "\(path) is larger than \(limit >> 10) KiB")) }
        return .success(bytes)
    }

    package struct ReadFailure: Error {
        package let reason: String
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, _ write: (UnsafeRawPointer, Int) -> Int) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = write(base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return nil
    }
}
