import Glibc

/// An anonymous temporary file for spilling pixels to disk: created in a given directory (next to
/// the output, so on the same filesystem) and unlinked at once, so nothing is left behind even after
/// a crash. Owns its descriptor.
final class ScratchFile {
    let fd: Int32

    init(directory: String) throws(DownloadError) {
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var template = Array("\(base.isEmpty ? "." : base)/.imgfetch-raster-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw DownloadError(.filesystem, "cannot create scratch file in \(base): \(Errno.describe())")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        fd = descriptor
    }

    deinit {
        close(fd)
    }

    /// Sets the size; the new bytes read as zeros without taking disk space.
    func resize(to size: Int) throws(DownloadError) {
        guard ftruncate(fd, off_t(size)) == 0 else { throw failure("size") }
    }

    func write(_ bytes: UnsafeRawPointer, count: Int, at offset: Int) throws(DownloadError) {
        if let code = FileDescriptorIO.writeAll(fd, UnsafeRawBufferPointer(start: bytes, count: count), at: offset) {
            throw failure("write", reason: Errno.describe(code))
        }
    }

    func read(into bytes: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(DownloadError) {
        var done = 0
        while done < count {
            let got = FileDescriptorIO.read(fd, into: UnsafeMutableRawBufferPointer(start: bytes + done, count: count - done),
                                            at: offset + done)
            guard got > 0 else { throw failure("read", reason: got == 0 ? "unexpected end of file" : nil) }
            done += got
        }
    }

    /// The error for a failed call; `reason` overrides errno for short transfers, which set none.
    private func failure(_ operation: String, reason: String? = nil) -> DownloadError {
        DownloadError(.filesystem, "cannot \(operation) scratch file: \(reason ?? Errno.describe())")
    }
}
