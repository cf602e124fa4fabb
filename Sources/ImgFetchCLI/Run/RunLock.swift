import Glibc
import ImgFetchCore

/// One run per output at a time: an exclusive `flock` on `DIR/.imgfetch/run.lock` for the output
/// directory (the work directory of an `s3://` output) and for `--work-dir`, held until the
/// process ends. A second run on the same output (a cron job that fires while the last one still
/// runs) waits for the first to end, with one line saying so, and then finds its work done: what
/// the first fetched while it waited is fresh for it (`DownloaderConfiguration.freshSince`), so no
/// URL is asked for twice (`--if-running wait`, the default). Or it exits 75 at once
/// (`--if-running skip`). The kernel drops
/// the lock of a process that dies, `kill -9` included, so a killed run's lock is taken over at
/// once. While a run waits, SIGINT and SIGTERM have their default action: Ctrl-C ends it as it
/// ends any program. The lock file holds the holder's pid and start time, for the waiting run's message.
///
/// On a network file system, Linux turns `flock` into the server's byte-range locks: NFSv4 (and
/// v3 with lockd) lock across machines; others may lock only within one machine.
final class RunLock {
    /// What a run does when another holds its output (`--if-running`).
    enum WhenHeld: String, Sendable, Equatable, CaseIterable {
        case wait, skip
    }

    private let descriptors: [Int32]
    /// When the run began to wait for another (seconds since the epoch); nil when it did not wait.
    let waitedSince: Double?

    private init(descriptors: [Int32], waitedSince: Double?) {
        self.descriptors = descriptors
        self.waitedSince = waitedSince
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }

    /// The lock file of `directory`.
    static func path(in directory: String) -> String {
        OutputPaths.join(OutputPaths.join(directory, CacheIndex.folderName), "run.lock")
    }

    /// Takes the locks of `directories` (in a fixed order, so two runs never hold one each), waiting
    /// for a holder or refusing, as `whenHeld` says; `say` gets the line a waiting run prints.
    static func acquire(_ directories: [String], whenHeld: WhenHeld, say: (String) -> Void) throws(SetupError) -> RunLock {
        var descriptors: [Int32] = []
        var waitedSince: Double?
        do {
            for directory in Set(directories).sorted() {
                descriptors.append(try lock(directory, whenHeld: whenHeld, say: say, waitedSince: &waitedSince))
            }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw error
        }
        return RunLock(descriptors: descriptors, waitedSince: waitedSince)
    }

    private static func lock(_ directory: String, whenHeld: WhenHeld, say: (String) -> Void,
                             waitedSince: inout Double?) throws(SetupError) -> Int32 {
        let folder = OutputPaths.join(directory, CacheIndex.folderName)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw SetupError(message: "cannot create \(folder): \(Errno.describe())", isTemporary: true)
        }
        let path = path(in: directory)
        for link in [folder, path] where CacheIndex.isSymbolicLink(link) {
            throw SetupError(message: CacheIndex.symbolicLinkProblem(link))
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw SetupError(message: "cannot open the run lock \(path): \(Errno.describe())", isTemporary: true) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                let reason = Errno.describe()
                close(fd)
                throw SetupError(message: "cannot lock \(path): \(reason) (a file system without locks is not supported)",
                                 isTemporary: true)
            }
            let holder = describeHolder(fd)
            switch whenHeld {
            case .skip:
                close(fd)
                throw SetupError(message: "another imgfetch run\(holder) is writing \(directory): skipped (--if-running skip)",
                                 exitCode: WorkerExit.temporaryFailure)
            case .wait:
                say("imgfetch: another imgfetch run\(holder) is writing \(directory); waiting for it to end "
                    + "(--if-running skip exits instead)\n")
                if waitedSince == nil { waitedSince = Double(time(nil)) }
                // Ctrl-C (or a TERM) ends the wait as it ends any program, also where the signals
                // came ignored (a shell's background job); the run's own handling starts later.
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
                while flock(fd, LOCK_EX) != 0 {
                    guard errno == EINTR else {
                        let reason = Errno.describe()
                        close(fd)
                        throw SetupError(message: "cannot lock \(path): \(reason)", isTemporary: true)
                    }
                }
            }
        }
        // Ours: say who holds it, for a run that comes while this one works.
        let text = Array("pid \(getpid()) started \(time(nil))\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }

    /// ` (pid 4242, for 3 min)` from the holder's lock file, or nothing when it does not say.
    private static func describeHolder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return "" }
        let words = String(decoding: buffer.prefix(count), as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count >= 4, words[0] == "pid", let pid = Int(words[1]), let started = Int(words[3]) else { return "" }
        let seconds = max(0, Int(time(nil)) - started)
        let since = seconds < 120 ? "\(seconds) s" : seconds < 7200 ? "\(seconds / 60) min" : "\(seconds / 3600) h"
        return " (pid \(pid), for \(since))"
    }
}
