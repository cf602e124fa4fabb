import Glibc

/// An append-only file of `GalleryRecord`s, read back in order at the end of the run. It is
/// created in `OUTDIR/.imgfetch/` and unlinked at once: it takes disk space, not memory, and never
/// outlives the process, even one killed with SIGKILL.
///
/// Not synchronized: the `GalleryRecorder`'s lock serializes appends, and reading happens after
/// the last append.
final class GalleryRecordFile {
    private let fd: Int32
    private var pending: [UInt8] = []
    /// Records appended so far.
    private(set) var count = 0
    /// The first write error (strerror), after which appends are dropped: the page cannot be whole.
    private(set) var failure: String?

    /// Bytes gathered before one `write(2)`.
    private static let flushThreshold = 64 << 10

    init(directory: String) throws(SetupError) {
        var template = Array("\(directory)/.gallery-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw SetupError(message: "cannot create a file in '\(directory)': \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        fd = descriptor
    }

    deinit {
        close(fd)
    }

    func append(_ record: GalleryRecord) {
        guard failure == nil else { return }
        record.encode(into: &pending)
        count += 1
        if pending.count >= Self.flushThreshold { flush() }
    }

    /// Writes out what is buffered.
    func flush() {
        var offset = 0
        while offset < pending.count && failure == nil {
            let written = pending.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { failure = written < 0 ? String(cString: strerror(errno)) : "short write" }
            offset += max(0, written)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the records in the order they were appended, `batchSize` at a time (the
    /// last batch may be smaller). Flushes first.
    func forEachBatch<E: Error>(of batchSize: Int, _ body: ([GalleryRecord]) throws(E) -> Void) throws(E) {
        flush()
        var buffer: [UInt8] = []
        var fileOffset: off_t = 0
        var batch: [GalleryRecord] = []
        batch.reserveCapacity(batchSize)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let got = pread(fd, chunk.baseAddress, chunk.count, fileOffset)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            fileOffset += off_t(got)
            buffer += UnsafeRawBufferPointer(rebasing: chunk[..<got])
            var consumed = 0
            buffer.withUnsafeBytes { bytes in
                while let record = GalleryRecord.decode(bytes, offset: &consumed) { batch.append(record) }
            }
            buffer.removeFirst(consumed)
            while batch.count >= batchSize {
                try body(Array(batch.prefix(batchSize)))
                batch.removeFirst(batchSize)
            }
        }
        if !batch.isEmpty { try body(batch) }
    }
}
