import Glibc
import ImgFetchCore
import Synchronization

/// `--report FILE`: the JSON lines, appended to `FILE.part` as items finish (so a crash leaves a
/// readable partial report) and renamed to FILE at the end, atomically (a `StagedFile`).
///
/// Appends from many threads are serialized by `file` (a Mutex).
final class ReportFile: Sendable {
    let path: String
    /// Open until `finish` or `discard`; its first write error (ENOSPC …) makes the report
    /// incomplete, and `finish` says so.
    private let file: Mutex<StagedFile?>

    init(path: String) throws(SetupError) {
        self.path = path
        do {
            file = Mutex(try StagedFile(path, tempName: .part, mode: 0o666))
        } catch {
            // A full, read-only or failing disk is the environment's fault; a wrong path is the command's.
            let temporary = [ENOSPC, EDQUOT, EROFS, EIO, ESTALE].contains(error.code)
            throw SetupError(message: "cannot write report '\(path)': \(Errno.describe(error.code))", isTemporary: temporary)
        }
    }

    func append(_ line: String) {
        file.withLock { file in try? file?.write(line) }
    }

    /// Closes and removes the partial file: for a run that never started.
    func discard() {
        file.withLock { file in
            file?.discard()
            file = nil
        }
    }

    /// Closes the file and moves it into place; returns an error message on failure.
    func finish() -> String? {
        file.withLock { file in
            guard let staged = file else { return nil }
            file = nil
            if let code = staged.failure {
                // Incomplete: never under the final name; FILE.part keeps what was written.
                staged.keepPart()
                return "cannot write report '\(path)' (what was written is in '\(staged.tempPath)'): \(Errno.describe(code))"
            }
            do {
                try staged.commit(keepOnFailure: true)
                return nil
            } catch {
                return "cannot write report '\(path)': \(Errno.describe(staged.failure ?? EIO))"
            }
        }
    }
}
