import Glibc
import ImgFetchCore
import Synchronization

/// `--report FILE`: the JSON lines, appended to `FILE.part` as items finish (so a crash leaves a
/// readable partial report) and renamed to FILE at the end, atomically.
///
/// Appends from many threads are serialized by `state` (a Mutex).
final class ReportFile: Sendable {
    let path: String
    private let partPath: String
    private let state: Mutex<Int32>

    init(path: String) throws(SetupError) {
        self.path = path
        partPath = path + ".part"
        let fd = open(partPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            throw SetupError(message: "cannot write report '\(path)': \(Errno.describe())")
        }
        state = Mutex(fd)
    }

    func append(_ line: String) {
        state.withLock { fd in
            guard fd >= 0 else { return }
            FileDescriptorSink(descriptor: fd).write(line)
        }
    }

    /// Closes and removes the partial file: for a run that never started.
    func discard() {
        state.withLock { fd in
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
            unlink(partPath)
        }
    }

    /// Closes the file and moves it into place; returns an error message on failure.
    func finish() -> String? {
        state.withLock { fd in
            guard fd >= 0 else { return nil }
            defer { fd = -1 }
            let synced = fsync(fd) == 0
            close(fd)
            guard synced, rename(partPath, path) == 0 else {
                return "cannot write report '\(path)': \(Errno.describe())"
            }
            return nil
        }
    }
}
