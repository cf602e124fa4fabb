import Glibc
import ImgFetchCore

/// `--gallery FILE`: the page is written to `FILE.part` and renamed to FILE once complete (a
/// `StagedFile`), so FILE is either the previous page or the whole new one. `FILE.part` is opened
/// before the run, so an unwritable path stops the run before it starts (exit 2), as `--report` does.
///
/// Not synchronized: opened at setup, written and finished by `GalleryRecorder.finish` alone.
final class GalleryPageFile {
    let path: String
    /// Open until `finish` or `discard`.
    private var file: StagedFile?
    private var buffer: [UInt8] = []

    init(path: String) throws(SetupError) {
        self.path = path
        // FILE.part can be written beside a directory that FILE names, but FILE could never replace it.
        var status = stat()
        if stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR {
            throw SetupError(message: "cannot write gallery '\(path)': \(Errno.describe(EISDIR))")
        }
        do {
            file = try StagedFile(path, tempName: .part, mode: 0o666)
        } catch {
            throw SetupError(message: "cannot write gallery '\(path)': \(Errno.describe(error.code))")
        }
    }

    /// Appends `text`, writing out every 256 KiB; a write error is kept for `finish`.
    func write(_ text: String) {
        buffer += text.utf8
        if buffer.count >= 256 << 10 { flush() }
    }

    private func flush() {
        _ = try? buffer.withUnsafeBytes { (bytes) throws(DownloadError) in try file?.write(bytes) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out the rest, syncs and moves the page into place; the error message on failure
    /// (the partial file is then removed).
    func finish() -> String? {
        guard let staged = file else { return nil }
        flush()
        file = nil
        do {
            try staged.commit()
            return nil
        } catch {
            return "cannot write gallery '\(path)': \(Errno.describe(staged.failure ?? EIO))"
        }
    }

    /// Closes and removes the partial page: for a run that never started, or a page that cannot be built.
    func discard() {
        file?.discard()
        file = nil
    }
}
