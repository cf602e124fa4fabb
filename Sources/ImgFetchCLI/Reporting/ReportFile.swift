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
    /// The open file (-1 once closed), and the first write error (ENOSPC …), after which the
    /// report is incomplete and `finish` says so.
    private let state: Mutex<(fd: Int32, writeError: Int32?)>

    init(path: String) throws(SetupError) {
        self.path = path
        partPath = path + ".part"
        let fd = open(partPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            // A full, read-only or failing disk is the environment's fault; a wrong path is the command's.
            let temporary = [ENOSPC, EDQUOT, EROFS, EIO, ESTALE].contains(errno)
            throw SetupError(message: "cannot write report '\(path)': \(Errno.describe())", isTemporary: temporary)
        }
        state = Mutex((fd, nil))
    }

    func append(_ line: String) {
        state.withLock { state in
            guard state.fd >= 0 else { return }
            var line = line
            if let code = line.withUTF8({ FileDescriptorIO.writeAll(state.fd, UnsafeRawBufferPointer($0)) }) {
                state.writeError = state.writeError ?? code
            }
        }
    }

    /// Closes and removes the partial file: for a run that never started.
    func discard() {
        state.withLock { state in
            guard state.fd >= 0 else { return }
            close(state.fd)
            state.fd = -1
            unlink(partPath)
        }
    }

    /// Closes the file and moves it into place; returns an error message on failure.
    func finish() -> String? {
        state.withLock { state in
            guard state.fd >= 0 else { return nil }
            let fd = state.fd
            state.fd = -1
            if let code = state.writeError {
                // Incomplete: never under the final name; FILE.part keeps what was written.
                close(fd)
                return "cannot write report '\(path)' (what was written is in '\(partPath)'): \(Errno.describe(code))"
            }
            let synced = fsync(fd) == 0
            close(fd)
            guard synced, rename(partPath, path) == 0 else {
                return "cannot write report '\(path)': \(Errno.describe())"
            }
            return nil
        }
    }
}
