import Glibc
import ImgFetchCore

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
            throw SetupError(message: "cannot create a file in '\(directory)': \(Errno.describe())")
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
        if failure == nil, let code = pending.withUnsafeBytes({ FileDescriptorIO.writeAll(fd, $0) }) {
            failure = Errno.describe(code)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the records in the order they were appended, `batchSize` at a time (the
    /// last batch may be smaller). Flushes first.
    func forEachBatch<E: Error>(of batchSize: Int, _ body: ([GalleryRecord]) throws(E) -> Void) throws(E) {
        flush()
        var buffer: [UInt8] = []
        var batch: [GalleryRecord] = []
        batch.reserveCapacity(batchSize)
        // A read error ends the records early, as the end of the file would: the page lists what was read.
        _ = try FileDescriptorIO.forEachChunk(of: fd, chunkSize: 256 << 10) { (chunk) throws(E) -> Bool in
            buffer += chunk
            var consumed = 0
            buffer.withUnsafeBytes { bytes in
                while let record = GalleryRecord.decode(bytes, offset: &consumed) { batch.append(record) }
            }
            buffer.removeFirst(consumed)
            while batch.count >= batchSize {
                try body(Array(batch.prefix(batchSize)))
                batch.removeFirst(batchSize)
            }
            return true
        }
        if !batch.isEmpty { try body(batch) }
    }
}
