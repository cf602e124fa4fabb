/// Keeps the cache index in step with the files the output stage places for one URL.
///
/// A new body (a download) stores the URL's entry with its first file, and later files join it;
/// a `no-store` response is never indexed, and what the index said of the URL and of the file
/// names is dropped. A body the index already has (a 304, a fresh entry, a copy of this run's
/// first file) only adds the new files to the entry.
///
/// Used by the one thread that places a URL's outputs at a time.
final class CacheRecorder {
    private enum Mode {
        /// Store this entry with the first file.
        case store(CacheEntry)
        /// The new entry is stored: every further file joins it.
        case stored
        /// Add the files the URL's entry does not list yet.
        case join
        /// The response may not be stored: forget the URL and the names.
        case forget
    }

    private let index: CacheIndex
    private let key: String
    private var mode: Mode

    /// For a downloaded body; nil without an index. `entry` is nil when the response forbids storing it.
    init?(index: CacheIndex?, key: String, newEntry entry: CacheEntry?) {
        guard let index else { return nil }
        self.index = index
        self.key = key
        mode = entry.map { .store($0) } ?? .forget
    }

    /// For a body the URL's entry already holds; nil without an index.
    init?(index: CacheIndex?, joining key: String) {
        guard let index else { return nil }
        self.index = index
        self.key = key
        mode = .join
    }

    /// The body is now the file `name`, as `stamp` describes it; `wasThere` when the file already
    /// held it (the entry lists it, and a new entry must list it too).
    func record(_ name: String, stamp: FileStamp?, wasThere: Bool) {
        switch mode {
        case .forget:
            index.remove(url: key, names: [name])
        case .join where wasThere:
            return
        case .join, .stored:
            guard let stamp else { return }
            index.addFile(CacheEntry.File(name: name, stamp: stamp), for: key)
        case .store(var entry):
            guard let stamp else { return }
            entry.files = [CacheEntry.File(name: name, stamp: stamp)]
            index.store(entry)
            mode = .stored
        }
    }
}
