import Glibc

/// A file imgfetch writes whole (a shard's tar, results and stats, the `--report` file, the
/// `--gallery` page): written under a temp name and renamed to its final name only when complete
/// and on disk, so a final name holds the earlier file or the whole new one, never part of one.
/// The one temp-then-rename primitive; a downloaded body is a `TempFile`, whose placement never
/// replaces a file another caller may hold (`TempFile+Placement`).
///
/// The first write error sticks: later writes do nothing, and `commit` fails with it.
///
/// Used by one thread at a time (a caller that writes from many, such as the report, holds a lock).
public final class StagedFile {
    /// How the temp file is named.
    public enum TempName: Sendable {
        /// `.imgfetch-PID@HOST-NAME` beside the final file: hidden, and removed by the next run in
        /// the directory if this one died (`TempFile.removeStale`). Created exclusively.
        case hidden
        /// `PATH.part`: where a user may look for what was written (a report's lines so far).
        /// A `.part` file left by an earlier run is truncated.
        case part
    }

    public let finalPath: String
    public let tempPath: String
    /// Open for writing until `commit`, `discard` or `keepPart`; -1 after.
    public private(set) var fd: Int32
    /// The errno of the first failure: a write's, or `commit`'s (the sync, the close, the rename).
    public private(set) var failure: Int32?

    /// The temp file could not be created: its path and the errno.
    public struct OpenError: Error {
        public let path: String
        public let code: Int32

        /// As an item's or a shard's error: class `disk-full` for ENOSPC and EDQUOT.
        public var downloadError: DownloadError { DownloadError.writing(path, code) }
    }

    /// Creates the temp file for `finalPath` (never through a symlink).
    public init(_ finalPath: String, tempName: TempName, mode: mode_t = 0o644) throws(OpenError) {
        self.finalPath = finalPath
        switch tempName {
        case .hidden:
            let slash = finalPath.lastIndex(of: "/")
            let directory = slash.map { String(finalPath[..<$0]) } ?? "."
            let name = slash.map { String(finalPath[finalPath.index(after: $0)...]) } ?? finalPath
            tempPath = directory + "/" + TempFile.namePrefix + TempFile.processTag + "-" + name
            unlink(tempPath)  // this process's own leftover, if any
            fd = open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        case .part:
            tempPath = finalPath + ".part"
            fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        }
        guard fd >= 0 else { throw OpenError(path: tempPath, code: errno) }
    }

    deinit {
        discard()
    }

    /// Writes all of `bytes`; fails with the first write error, this one's or an earlier one's.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(DownloadError) {
        append(bytes)
        if let failure { throw DownloadError.writing(finalPath, failure) }
    }

    /// Writes all of `text`'s UTF-8, as `write(_:)` does bytes.
    public func write(_ text: String) throws(DownloadError) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        if let failure { throw DownloadError.writing(finalPath, failure) }
    }

    /// Writes `bytes` unless a write failed before; a failure becomes `failure`.
    private func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        failure = fd >= 0 ? FileDescriptorIO.writeAll(fd, bytes) : EBADF
    }

    /// Syncs the file to disk and renames it to its final name, replacing a file there; on any
    /// failure (an earlier write's too) nothing is renamed, and the temp file is removed, or kept
    /// with `keepOnFailure` (a report's lines so far).
    public func commit(keepOnFailure: Bool = false) throws(DownloadError) {
        guard fd >= 0 else { throw DownloadError(.filesystem, "cannot write \(finalPath): already closed") }
        failure = failure ?? (fsync(fd) == 0 ? nil : errno)
        let closed = close(fd) == 0 ? nil : errno
        fd = -1
        failure = failure ?? closed
        if let failure {
            if !keepOnFailure { unlink(tempPath) }
            throw DownloadError.writing(finalPath, failure)
        }
        guard rename(tempPath, finalPath) == 0 else {
            failure = errno
            if !keepOnFailure { unlink(tempPath) }
            throw DownloadError(.filesystem, "cannot rename \(tempPath) to \(finalPath): \(Errno.describe(failure ?? EIO))")
        }
    }

    /// Closes the file and leaves it under its temp name, for the user to read: what a report had
    /// written before a write failed.
    public func keepPart() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// Closes and removes the temp file, if it is still there.
    public func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(tempPath)
    }
}
