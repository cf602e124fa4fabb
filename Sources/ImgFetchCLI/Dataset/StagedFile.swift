import Glibc
import ImgFetchCore

/// A file written under a temp name in the output directory and renamed to its final name only
/// when complete, so that a killed run never leaves a truncated file under a final name. The
/// temp name (`.imgfetch-PID-NAME`) is one that the next run in the directory removes if this
/// process died (`TempFile.removeStale`).
///
/// Used by one thread at a time.
final class StagedFile {
    let finalPath: String
    let tempPath: String
    /// Open for writing until `commit` or `discard`; -1 after.
    private(set) var fd: Int32

    /// Creates the temp file for `name` in `directory` (exclusively, never through a symlink).
    init(directory: String, name: String) throws(DownloadError) {
        finalPath = directory + "/" + name
        tempPath = directory + "/.imgfetch-\(TempFile.processTag)-" + name
        unlink(tempPath)  // this process's own leftover, if any
        fd = open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw DownloadError.writing(tempPath, errno) }
    }

    deinit {
        discard()
    }

    /// Writes all of `text`.
    func write(_ text: String) throws(DownloadError) {
        var text = text
        if let code = text.withUTF8({ FileDescriptorIO.writeAll(fd, UnsafeRawBufferPointer($0)) }) {
            throw DownloadError.writing(finalPath, code)
        }
    }

    /// Flushes the file to disk and renames it to its final name, replacing a file there.
    func commit() throws(DownloadError) {
        guard fd >= 0 else { throw DownloadError(.filesystem, "cannot write \(finalPath): already closed") }
        let synced = fsync(fd) == 0 ? nil : errno
        let closed = close(fd) == 0 ? nil : errno
        fd = -1
        if let code = synced ?? closed {
            unlink(tempPath)
            throw DownloadError.writing(finalPath, code)
        }
        guard rename(tempPath, finalPath) == 0 else {
            let reason = Errno.describe()
            unlink(tempPath)
            throw DownloadError(.filesystem, "cannot rename \(tempPath) to \(finalPath): \(reason)")
        }
    }

    /// Closes and removes the temp file, if it is still there.
    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(tempPath)
    }
}
