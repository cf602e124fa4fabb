import Glibc

/// Puts outputs under their final names in the output directory: the one place that decides how
/// a body reaches a name and whether a file already there may be replaced.
///
/// Every output goes through it: a fresh download (the temp file itself for its first name, a
/// copy for each other name), a copy of this run's earlier result for a repeated URL, and a copy
/// of an indexed file after a 304 or from the cache index. Placing is atomic (see
/// `TempFile+Placement`): a final path holds the earlier file or the whole new one.
struct OutputPlacer: Sendable {
    let directory: String
    let tempFiles: TempFileDirectory
    let existingFiles: ExistingFilePolicy

    /// Where an output's bytes come from.
    enum Source {
        /// A verified body's temp file, which becomes the file at the name (no copy); it stays
        /// usable for further names.
        case body(TempFile)
        /// A copy of a verified body's temp file, for a second name of the same body.
        case copy(of: TempFile)
        /// A copy of a file already in the output directory (an earlier result, an indexed file).
        case file(at: String)
    }

    /// The path of `name` in the output directory.
    func path(of name: String) -> String {
        OutputPaths.join(directory, name)
    }

    /// Whether a file found at `name` may be replaced: with `--overwrite`, or when the cache index
    /// gave that name to this URL before (`indexedNames`), so it holds this URL's older body.
    /// Anything else at the name is someone else's file, and `--skip-existing` keeps it.
    func mayReplace(_ name: String, indexedNames: Set<String>) -> Bool {
        existingFiles == .overwrite || indexedNames.contains(name)
    }

    /// Places `source` at `name`: `.saved`, or `.existed` when a file that may not be replaced
    /// was already there (it is left untouched).
    func place(_ source: Source, as name: String, indexedNames: Set<String>) throws(DownloadError) -> TempFile.Commit {
        let target = path(of: name)
        let overwrite = mayReplace(name, indexedNames: indexedNames)
        switch source {
        case .body(let body):
            return try body.place(at: target, overwrite: overwrite)
        case .copy(let body):
            return try body.copy(in: tempFiles).commit(to: target, overwrite: overwrite)
        case .file(let sourcePath):
            return try tempFiles.copy(of: sourcePath).commit(to: target, overwrite: overwrite)
        }
    }
}

extension OutputPlacer {
    /// The stamp of the regular file `name` in the output directory; nil when there is none (a
    /// symlink or directory planted there is not an indexed file).
    func stamp(of name: String) -> FileStamp? {
        var info = stat()
        guard lstat(path(of: name), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(size: Int64(info.st_size), inode: UInt64(info.st_ino),
                         modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// Whether the file `name` is one of `entry`'s files, unchanged since it was indexed.
    func holds(_ entry: CacheEntry, as name: String) -> Bool {
        entry.files.contains { $0.name == name && $0.matches(stamp(of: name)) }
    }
}
