/// Keeps the cache index in step with the placements of one downloaded body: the first file
/// placed stores the URL's entry, later ones join it. A `no-store` response is never indexed,
/// and what the index said of the URL before is dropped.
///
/// Used by the one decode-stage thread that places the body.
final class CacheRecorder {
    let kind: String
    /// True when the body's files are indexed (an index is kept and the response allows storing).
    let indexes: Bool
    private let index: CacheIndex?
    private let key: String
    private var entry: CacheEntry?
    private var stored = false

    init(index: CacheIndex?, key: String, body: FetchedBody, prepared: PreparedOutput, kind: String) {
        self.index = index
        self.key = key
        self.kind = kind
        guard index != nil, let hash = body.contentHash, !body.cacheHeaders.directives.noStore else {
            indexes = false
            return
        }
        indexes = true
        entry = CacheEntry(url: key, finalURL: body.finalURL, kind: kind, format: prepared.format, image: prepared.image, headers: body.cacheHeaders,
                           freshness: CacheFreshness(headers: body.cacheHeaders, requestTime: body.requestTime,
                                                     responseTime: body.responseTime),
                           bodySize: body.bytes, contentHash: hash, files: [])
    }

    /// The body now is (or already was) the file `name`, as `stamp` describes it.
    func record(_ name: String, stamp: FileStamp?) {
        guard let index else { return }
        guard var entry else {
            index.remove(url: key, names: [name])
            return
        }
        guard let stamp else { return }
        let file = CacheEntry.File(name: name, stamp: stamp)
        if stored {
            index.addFile(file, for: key)
        } else {
            entry.files = [file]
            index.store(entry)
            stored = true
        }
    }
}
