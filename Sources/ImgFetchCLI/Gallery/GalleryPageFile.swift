import Glibc
import ImgFetchCore

/// `--gallery FILE`: the page is written to `FILE.part` and renamed to FILE once complete, so FILE
/// is either the previous page or the whole new one. `FILE.part` is opened before the run, so an
/// unwritable path stops the run before it starts (exit 2), as `--report` does.
///
/// Not synchronized: opened at setup, written and finished by `GalleryRecorder.finish` alone.
final class GalleryPageFile {
    let path: String
    private let partPath: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// The first write error (errno); later writes are dropped and `finish` reports it.
    private var failure: Int32?

    init(path: String) throws(SetupError) {
        self.path = path
        partPath = path + ".part"
        // FILE.part can be written beside a directory that FILE names, but FILE could never replace it.
        var status = stat()
        if stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR {
            throw SetupError(message: "cannot write gallery '\(path)': \(Errno.describe(EISDIR))")
        }
        fd = open(partPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            throw SetupError(message: "cannot write gallery '\(path)': \(Errno.describe())")
        }
    }

    deinit {
        discard()
    }

    /// Appends `text`, writing out every 256 KiB.
    func write(_ text: String) {
        buffer += text.utf8
        if buffer.count >= 256 << 10 { flush() }
    }

    private func flush() {
        if failure == nil && fd >= 0 {
            failure = buffer.withUnsafeBytes { FileDescriptorIO.writeAll(fd, $0) }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out the rest, syncs and moves the page into place; the error message on failure
    /// (the partial file is then removed).
    func finish() -> String? {
        guard fd >= 0 else { return nil }
        flush()
        if failure == nil && fsync(fd) != 0 { failure = errno }
        close(fd)
        fd = -1
        if failure == nil && rename(partPath, path) != 0 { failure = errno }
        guard let failure else { return nil }
        unlink(partPath)
        return "cannot write gallery '\(path)': \(Errno.describe(failure))"
    }

    /// Closes and removes the partial page: for a run that never started, or a page that cannot be built.
    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(partPath)
    }
}
