import Glibc

/// A body's temp file in the output directory: created exclusively, never followed through a
/// symlink, and removed unless it was committed to its final path.
///
/// Ownership moves from the engine thread (which writes it) to the decode stage (which commits
/// it); it is never used by two threads at once, hence `@unchecked Sendable`.
public final class TempFile: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32
    private var committed = false

    /// What committing did.
    public enum Commit: Sendable {
        case saved
        /// `skip` policy and a file was already at the final path; the temp file was removed.
        case existed
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed { unlink(path) }
    }

    /// Creates `DIR/.imgfetch-RANDOM.part` with `O_CREAT|O_EXCL|O_NOFOLLOW`; the mode respects the umask.
    static func create(in directory: String) throws(DownloadError) -> TempFile {
        for _ in 0..<8 {
            let name = ".imgfetch-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".part"
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd >= 0 { return TempFile(path: path, descriptor: fd) }
            if errno != EEXIST { throw DownloadError(.filesystem, "cannot create a temp file in \(directory): \(Errno.describe())") }
        }
        throw DownloadError(.filesystem, "cannot create a unique temp file in \(directory)")
    }

    /// Appends all of `bytes`; returns errno on failure.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Empties the file for a new attempt.
    func truncate() {
        _ = ftruncate(descriptor, 0)
        _ = lseek(descriptor, 0, SEEK_SET)
    }

    /// Closes the write descriptor once the body is complete.
    func finishWriting() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// Moves the temp file to `finalPath` atomically. With `overwrite` an existing file is replaced;
    /// otherwise an existing file wins and is left untouched (hard link, which fails on EEXIST, then unlink).
    public func commit(to finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        finishWriting()
        if overwrite {
            guard rename(path, finalPath) == 0 else {
                throw DownloadError(.filesystem, "cannot write \(finalPath): \(Errno.describe())")
            }
            committed = true
            return .saved
        }
        if link(path, finalPath) == 0 {
            unlink(path)
            committed = true
            return .saved
        }
        switch errno {
        case EEXIST:
            return discardForExisting()
        case EPERM, ENOTSUP, EXDEV, EMLINK:
            // File systems without hard links: check, then rename (a small race instead of no skip at all).
            if access(finalPath, F_OK) == 0 { return discardForExisting() }
            guard rename(path, finalPath) == 0 else {
                throw DownloadError(.filesystem, "cannot write \(finalPath): \(Errno.describe())")
            }
            committed = true
            return .saved
        default:
            throw DownloadError(.filesystem, "cannot write \(finalPath): \(Errno.describe())")
        }
    }

    /// The final path is taken: the temp file goes now, not when this object is freed.
    private func discardForExisting() -> Commit {
        unlink(path)
        committed = true
        return .existed
    }
}

/// errno as text.
enum Errno {
    static func describe(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
