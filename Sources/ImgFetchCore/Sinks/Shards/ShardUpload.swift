import Glibc

/// Puts a complete shard into the object store (`-o s3://…` with `--output-format webdataset`):
/// the shard is written whole in the work directory first, then its objects go up in the order
/// that keeps the store's shard trustworthy at every moment: the tar, the results, and the stats
/// object last. The stats object names the entity tags the store gave the tar and the results
/// (`tar_etag`, `results_etag`), so it vouches only for those very objects: an earlier run's
/// stats object never vouches for a tar or results that a later run (or a second attempt of the
/// shard, interleaved with this one) replaced, and a re-run takes the shard as finished only if
/// both tags still match. So nothing is ever deleted, which also spares the `s3:DeleteObject`
/// permission. The local files go afterwards, uploaded or not: the store is the output, and a
/// re-run fetches what it lacks.
///
/// Used on the `DatasetWriter`'s finisher thread; its requests run on the downloader's engine.
public struct ShardUpload: Sendable {
    public let store: ObjectStoreOutput
    /// Ends an upload in progress when the run is cancelled.
    public let stop = S3Client.Stop()
    /// The store's client, on `downloader`'s engine; the list reader reads finished shards with it too.
    public let client: S3Client

    public init(store: ObjectStoreOutput, downloader: ImageDownloader) {
        self.store = store
        client = S3Client(access: store.access, settings: store.settings, downloader: downloader, stop: stop, health: store.health,
                          journal: store.journal)
    }

    /// Uploads the files of shard `names` from `directory`, then removes them there.
    func upload(_ names: ShardNames, from directory: String) throws(DownloadError) {
        let files = [names.tar, names.results, names.stats]
        defer { for name in files { unlink(directory + "/" + name) } }
        let bucket = store.location.bucket
        /// Puts `name`, and returns the entity tag the store gave it (from a HEAD when the PUT's answer had none).
        @discardableResult
        func put(_ name: String) throws(DownloadError) -> String? {
            let key = store.location.key(name)
            let tag = try client.put(file: directory + "/" + name, bucket: bucket, key: key,
                                     contentType: ObjectStoreOutput.contentType(of: name))
            return tag ?? (try? client.head(bucket: bucket, key: key))??.etag
        }
        do {
            let tags = ["tar_etag": try put(names.tar), "results_etag": try put(names.results)]
            try Self.addTags(tags.compactMapValues { $0 }, toStats: names.stats, in: directory)
            try put(names.stats)
        } catch {
            throw DownloadError(error.kind, "shard \(store.location.url(names.tar)) not uploaded: \(error.message)")
        }
    }

    /// Uploads the file `name` from `directory` (the dataset's `stats.json`), then removes it there.
    func upload(file name: String, from directory: String) throws(DownloadError) {
        defer { unlink(directory + "/" + name) }
        _ = try client.put(file: directory + "/" + name, bucket: store.location.bucket, key: store.location.key(name),
                           contentType: ObjectStoreOutput.contentType(of: name))
    }

    /// Adds `tags` (name → entity tag) to the end of the stats file's JSON object, in name order;
    /// the file is written anew under a temp name and renamed, as `ShardWriter` wrote it.
    static func addTags(_ tags: [String: String], toStats name: String, in directory: String) throws(DownloadError) {
        guard !tags.isEmpty else { return }
        let path = directory + "/" + name
        guard let bytes = FinishedShard.contents(of: path, limit: 1 << 20), let close = bytes.lastIndex(of: UInt8(ascii: "}")) else {
            throw DownloadError(.filesystem, "\(path) is not a stats file")
        }
        var json = JSONWriter(continuing: String(decoding: bytes[..<close], as: UTF8.self))
        for (tag, value) in tags.sorted(by: { $0.key < $1.key }) { json.add(tag, value) }
        let stats = try ShardWriter.staged(name, in: directory)
        try stats.write(json.line)
        try stats.commit()
    }
}
