import Glibc
import ImgFetchCore

/// Puts a complete shard into the object store (`-o s3://…` with `--output-format webdataset`):
/// the shard is written whole in the work directory first, then its objects go up in the order
/// that keeps the store's shard trustworthy at every moment: the tar, the results, and the stats
/// object last. The stats object names the tar's entity tag as the store gave it (`tar_etag`),
/// so an earlier run's stats object never vouches for a tar that a later run replaced (or half
/// replaced): a re-run takes the shard as finished only if the tar's ETag is still that one. So
/// nothing is ever deleted, which also spares the `s3:DeleteObject` permission and leaves no
/// window in which a second attempt of the shard could remove the first one's stats. The local
/// files go afterwards, uploaded or not: the store is the output, and a re-run fetches what it lacks.
///
/// Used under the `DatasetWriter`'s lock; each upload has its own `S3Client`, so no libcurl
/// handle outlives the thread that made it.
struct ShardUpload: Sendable {
    let store: ObjectStoreOutput
    /// Ends an upload in progress when the run is cancelled.
    let stop = S3Client.Stop()

    /// Uploads the files of shard `names` from `directory`, then removes them there.
    func upload(_ names: ShardNames, from directory: String) throws(DownloadError) {
        let files = [names.tar, names.results, names.stats]
        defer { for name in files { unlink(directory + "/" + name) } }
        let client = S3Client(access: store.access, settings: store.settings, stop: stop)
        let bucket = store.location.bucket
        @discardableResult
        func put(_ name: String) throws(DownloadError) -> String? {
            try client.put(file: directory + "/" + name, bucket: bucket, key: store.location.key(name),
                           contentType: ObjectStoreOutput.contentType(of: name))
        }
        do {
            let etag = try put(names.tar)
            try put(names.results)
            if let etag { try Self.addTarTag(etag, toStats: directory + "/" + names.stats) }
            try put(names.stats)
        } catch {
            throw DownloadError(error.kind, "shard \(store.location.url(names.tar)) not uploaded: \(error.message)")
        }
    }

    /// Adds `"tar_etag": ETAG` to the end of the stats file's JSON object.
    static func addTarTag(_ etag: String, toStats path: String) throws(DownloadError) {
        guard let file = fopen(path, "r+e") else { throw DownloadError(.filesystem, "cannot open \(path): \(Errno.describe())") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = fread(&chunk, 1, chunk.count, file), count > 0 { bytes += chunk.prefix(count) }
        guard let close = bytes.lastIndex(of: UInt8(ascii: "}")) else {
            throw DownloadError(.filesystem, "\(path) is not a stats file")
        }
        let text = String(decoding: bytes[..<close], as: UTF8.self) + ",\"tar_etag\":" + JSONLine.string(etag) + "}\n"
        rewind(file)
        guard ftruncate(fileno(file), 0) == 0, fputs(text, file) >= 0, fflush(file) == 0 else {
            throw DownloadError(.filesystem, "cannot write \(path): \(Errno.describe())")
        }
    }
}
