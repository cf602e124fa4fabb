import CFileSystem
import Glibc

/// Putting a complete temp file at its final path, atomically: a final path holds an earlier
/// file or the whole new one, never part of one, and never something written through a symlink
/// planted there.
///
/// The file gets its final name by a hard link: `linkat` through `/proc/self/fd/N` for an unnamed
/// file, `link` from its name (which `commit` then removes) for a named one. A link fails on
/// EEXIST rather than replace anything, which is `--skip-existing`; `--overwrite` links under a
/// fresh side name and renames that over the final path. A file system that cannot link the file
/// gets a named copy moved into place with `rename` (which replaces) or `renameat2`'s
/// `RENAME_NOREPLACE` (which does not).
extension TempFile {
    /// What placing did.
    public enum Commit: Sendable {
        case saved
        /// `skip` policy and a file was already at the final path; the temp file was removed.
        case existed
    }

    /// Places the file at `finalPath` for good: the temp file is gone afterwards. With `overwrite`
    /// an existing file is replaced; otherwise an existing file wins and is left untouched.
    public func commit(to finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        let outcome = try place(at: finalPath, overwrite: overwrite)
        if let path { unlink(path) }
        committed = true
        closeDescriptor()
        return outcome
    }

    /// Gives `finalPath` this file's content atomically and keeps the temp file, so that it can be
    /// copied under more names. With `overwrite` an existing file is replaced (a hard link under a
    /// side name, then rename); otherwise an existing file wins (a hard link fails on EEXIST, and
    /// never follows a symlink planted at the final path).
    public func place(at finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        try writeOut()
        guard overwrite else {
            guard let code = link(as: finalPath) else { return .saved }
            if code == EEXIST { return try Self.existing(at: finalPath) }
            return try placeCopy(at: finalPath, overwrite: false, after: code)
        }
        var code = EEXIST
        for _ in 0..<8 where code == EEXIST {
            let side = folder.newName()
            guard let failed = link(as: side) else {
                guard rename(side, finalPath) == 0 else {
                    let code = errno
                    unlink(side)
                    throw DownloadError.writing(finalPath, code)
                }
                return .saved
            }
            code = failed
        }
        if code == EEXIST { throw DownloadError(.filesystem, "cannot write \(finalPath): no unique side name in \(directory)") }
        return try placeCopy(at: finalPath, overwrite: true, after: code)
    }

    /// What is at `finalPath` when it could not be replaced: a file (or a symlink, which is never
    /// followed) that `--skip-existing` keeps, or a directory in the way, which is no image of this
    /// item's and fails it.
    private static func existing(at finalPath: String) throws(DownloadError) -> Commit {
        var info = stat()
        if lstat(finalPath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw DownloadError(.filesystem, "cannot write \(finalPath): a directory is in the way")
        }
        return .existed
    }

    /// Names the file `target` with a hard link; errno on failure.
    private func link(as target: String) -> Int32? {
        let linked = if let path {
            Glibc.link(path, target)
        } else {
            // AT_SYMLINK_FOLLOW: /proc/self/fd/N is a link to the open file, which is what gets the name.
            linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, target, AT_SYMLINK_FOLLOW)
        }
        return linked == 0 ? nil : errno
    }

    /// After a link failed with `code`: when the file system cannot link this file (no hard links,
    /// too many of them, or `/proc` gone for an unnamed file), a named copy is moved into place.
    private func placeCopy(at finalPath: String, overwrite: Bool, after code: Int32) throws(DownloadError) -> Commit {
        let cannotLink = code == EPERM || code == EOPNOTSUPP || code == EXDEV || code == EMLINK || (path == nil && code == ENOENT)
        guard cannotLink else { throw DownloadError.writing(finalPath, code) }
        return try copy(in: TempFileDirectory(path: directory, kind: .named)).move(to: finalPath, overwrite: overwrite)
    }

    /// Renames this named file to `finalPath`: replacing what is there with `overwrite`, else only
    /// where nothing is (RENAME_NOREPLACE, which a symlink there fails too).
    func move(to finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        guard let path else { preconditionFailure("only a named file can be renamed") }
        try writeOut()
        if (overwrite ? rename(path, finalPath) : CFileSystem_renameNoReplace(path, finalPath)) == 0 {
            committed = true
            return .saved
        }
        let code = errno
        if code == EEXIST && !overwrite { return try Self.existing(at: finalPath) }
        guard code == EINVAL && !overwrite else { throw DownloadError.writing(finalPath, code) }
        throw DownloadError(.filesystem, "cannot write \(finalPath): the file system supports neither hard links nor renaming without replacing")
    }
}
