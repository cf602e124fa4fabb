import Glibc
import Synchronization

/// The upload stage of a `-o s3://…` run with a file per image: each result that has files
/// (saved, or skipped because the work directory has them already) waits here until its files
/// are objects in the store, and only then goes on to its result line, with the objects' `s3://`
/// URLs as its paths. So "saved" means the store answered 200 to the PUT.
///
/// A skipped item's file was made by an earlier run, which may have died before its upload, or
/// whose upload failed: it is uploaded unless the store has an object of its size already (one
/// HEAD). An upload that fails after its retries fails the item with class `storage`; its local
/// file stays, so a re-run uploads it without downloading it again.
///
/// `threads` upload threads (one `Executor`, each worker taking one job) share one `S3Client`,
/// whose requests run on the downloader's engine: a thread only waits for their answers. Results
/// reach `submit` on the output thread and leave from the upload threads; the run's admission
/// window bounds how many wait here.
public final class ObjectUploader: Sendable {
    public typealias Done = @Sendable (ItemReport) -> Void

    private struct Job {
        let report: ItemReport
        let done: Done
    }

    private let output: ObjectStoreOutput
    private let stop = S3Client.Stop()
    private let client: S3Client
    private let executor: Executor<Job>
    /// Set once by `cancel`: the jobs still waiting end with it, unrun.
    private let ending = Ending()

    private final class Ending: Sendable {
        let error = Mutex<DownloadError?>(nil)
    }

    public init(output: ObjectStoreOutput, downloader: ImageDownloader, threads: Int) {
        self.output = output
        let client = S3Client(access: output.access, settings: output.settings, downloader: downloader, stop: stop, health: output.health,
                              journal: output.journal)
        self.client = client
        let ending = ending
        executor = Executor(threadNames: (0..<threads).map { "imgfetch.upload.\($0)" }) { jobs in
            for job in jobs {
                var report = job.report
                report.result = ending.error.withLock { $0 }.map { Self.ended(report.result, by: $0) }
                    ?? Self.upload(report.result, output: output, with: client, ending: ending)
                job.done(report)
            }
        }
    }

    /// Upload threads for `concurrency` transfers: uploads wait on the network as downloads do.
    public static func threads(concurrency: Int) -> Int { min(16, max(2, concurrency / 2)) }

    /// Hands `report` on to `done` once its files are uploaded; at once when it has none.
    public func submit(_ report: ItemReport, done: @escaping Done) {
        guard Self.hasFiles(report.result) else { return done(report) }
        // Submitted after `close`: handed on as the run's end left it.
        if let job = executor.submit(Job(report: report, done: done)) {
            var report = job.report
            report.result = Self.ended(report.result, by: ending.error.withLock { $0 } ?? .cancelled)
            job.done(report)
        }
    }

    private static func hasFiles(_ result: DownloadResult) -> Bool {
        (result.status == .saved || result.status == .skipped) && !result.paths.isEmpty
    }

    /// Ends the uploads in progress and fails every waiting one with `error` (cancelled by default).
    public func cancel(failingWith error: DownloadError = .cancelled) {
        ending.error.withLock { if $0 == nil { $0 = error } }
        stop.request()
    }

    /// Waits until every thread is done; the submitted jobs have all been handed on by then.
    public func close() {
        executor.close()
    }

    /// The result once its files are objects: their URLs as its paths, or a failure.
    private static func upload(_ result: DownloadResult, output: ObjectStoreOutput, with client: S3Client, ending: Ending) -> DownloadResult {
        var result = result
        var urls: [String] = []
        for path in result.paths {
            guard let name = output.name(ofLocal: path) else {
                return ended(result, by: DownloadError(.filesystem, "\(path) is outside the work directory \(output.workDirectory)"))
            }
            let key = output.location.key(name)
            do {
                if result.status == .skipped, try stored(key, size: localSize(path), output: output, with: client) {
                    urls.append(output.location.url(name))
                    continue
                }
                try client.put(file: path, bucket: output.location.bucket, key: key, contentType: ObjectStoreOutput.contentType(of: name))
                urls.append(output.location.url(name))
                result.uploadedObjects += 1
            } catch {
                // Ended by `cancel`: with the run's reason (the store's stop), not as cancelled.
                let reason = error.kind == .cancelled ? ending.error.withLock { $0 } ?? error : error
                return ended(result, by: reason)
            }
        }
        result.paths = urls
        return result
    }

    /// Whether the store has object `key` of `size` bytes. A HEAD it refuses (AWS answers 403 for
    /// a missing object to a key without `s3:ListBucket`) counts as "no": the PUT says the rest.
    private static func stored(_ key: String, size: Int?, output: ObjectStoreOutput, with client: S3Client) throws(DownloadError) -> Bool {
        do {
            return try client.head(bucket: output.location.bucket, key: key)?.size == size && size != nil
        } catch {
            if error.kind == .cancelled { throw error }
            return false
        }
    }

    private static func ended(_ result: DownloadResult, by error: DownloadError) -> DownloadResult {
        if error.kind == .cancelled { return .cancelled }
        return .failed(error, attempts: result.attempts, httpStatus: result.httpStatus, httpVersion: result.httpVersion)
    }

    private static func localSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}
