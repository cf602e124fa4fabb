import Glibc
import ImgFetchCore

/// Puts a complete shard into the object store (`-o s3://…` with `--output-format webdataset`):
/// the shard is written whole in the work directory first, then its objects go up in the order
/// that keeps the store's shard trustworthy at every moment: an earlier run's stats object is
/// deleted, then the tar and the results are put, and the stats object last, so that a stats
/// object always describes the tar beside it. The local files go afterwards, uploaded or not:
/// the store is the output, and a re-run fetches what it lacks.
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
        do {
            try client.delete(bucket: bucket, key: store.location.key(names.stats))
            for name in files {
                try client.put(file: directory + "/" + name, bucket: bucket, key: store.location.key(name),
                               contentType: ObjectStoreOutput.contentType(of: name))
            }
        } catch {
            throw DownloadError(error.kind, "shard \(store.location.url(names.tar)) not uploaded: \(error.message)")
        }
    }
}
