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
            throw DownloadError.writing("a scratch file in \(base)", errno)
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
        guard ftruncate(fd, off_t(size)) == 0 else { throw DownloadError.writing("scratch file", errno) }
    }

    func write(_ bytes: UnsafeRawPointer, count: Int, at offset: Int) throws(DownloadError) {
        if let code = FileDescriptorIO.writeAll(fd, UnsafeRawBufferPointer(start: bytes, count: count), at: offset) {
            throw DownloadError.writing("scratch file", code)
        }
    }

    func read(into bytes: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(DownloadError) {
        var done = 0
        while done < count {
            let got = FileDescriptorIO.read(fd, into: UnsafeMutableRawBufferPointer(start: bytes + done, count: count - done),
                                            at: offset + done)
            guard got > 0 else { throw readFailure(reason: got == 0 ? "unexpected end of file" : nil) }
            done += got
        }
    }

    /// The error for a failed read; `reason` overrides errno for short reads, which set none.
    private func readFailure(reason: String? = nil) -> DownloadError {
        DownloadError(.filesystem, "cannot read scratch file: \(reason ?? Errno.describe())")
    }
}
