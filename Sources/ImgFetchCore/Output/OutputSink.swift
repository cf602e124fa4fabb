/// Where the downloader's verified outputs go: the last stage of an item inside the downloader.
///
/// A sink decides what an item needs before any request (its name, and whether the output is
/// there already), and takes each verified output for every caller of its transfer, whose results
/// it completes through the `OutputStage`. Two sinks, chosen by `DownloaderConfiguration.outputs`:
///
/// - `DirectorySink` (`.placed`): each output placed under every caller's file name in the output
///   directory (`OutputPlacer`), and recorded in the cache index (`CacheRecorder`), which also
///   serves outputs without a request and revalidates them;
/// - `HandOverSink` (`.handedOver`): each output handed to its callers as an `OutputFile`, for a
///   writer of their own. `DatasetWriter` writes them into WebDataset shards; with an object store,
///   `ShardUpload` puts each complete shard, as `ObjectUploader` puts the files a `DirectorySink`
///   placed (`docs/STORAGE.md`).
///
/// A sink is called from the list reader (`name`, `plan`) and from decode workers (the rest).
protocol OutputSink: Sendable {
    /// Completes the callers and delivers their results.
    var stage: OutputStage { get }
    /// The cache index the sink keeps; nil when it keeps none.
    var index: CacheIndex? { get }
    /// Whether a body the engine kept in memory is written out to its temp file before it is
    /// taken: a `DirectorySink` places the file itself.
    var takesFiles: Bool { get }

    /// The output's name for the item, claimed for the run.
    func name(for url: ParsedURL, explicitName: String?) throws(DownloadError) -> OutputName
    /// What the item needs before any request: a download, a revalidation, or its output served
    /// without one.
    func plan(key: String, name: OutputName) -> CachePlan
    /// Whether `key`'s transfer takes its body's SHA-256.
    func digestsBody(_ plan: CachePlan) -> Bool

    /// A verified download (`base` is its result so far), for every caller of the transfer.
    func take(_ output: PreparedOutput, key: String, transferID: Int, plan: CachePlan, body: ReceivedBody,
              response: ResponseMetadata, base: DownloadResult)
    /// A 304 confirmed `plan.entry`: every caller of the URL is served from its files.
    func finishNotModified(key: String, transferID: Int, plan: CachePlan, response: ResponseMetadata)
    /// Serves a caller of a URL finished earlier in this run, from that result.
    func serveRepeat(_ subscriber: Subscriber, key: String, from item: FinishedItem)
    /// Serves a caller whose plan needs no request.
    func serveWithoutRequest(_ subscriber: Subscriber, plan: CachePlan)
}

extension OutputSink {
    /// A transfer's body, checked by the decode stage: taken for every caller, or the decode
    /// stage's error for every caller.
    func finishDownload(key: String, transferID: Int, plan: CachePlan, body: ReceivedBody, response: ResponseMetadata,
                        prepared: Result<PreparedOutput, DownloadError>) {
        var base = DownloadResult(status: .failed)
        base.httpStatus = response.status
        base.httpVersion = response.httpVersion
        base.bytes = body.bytes
        base.attempts = response.attempts
        switch prepared {
        case .failure(let error):
            base.error = error
            stage.fail(key: key, transferID: transferID, base)
        case .success(let output):
            base.format = output.format
            base.image = output.image
            base.cache = .downloaded
            take(output, key: key, transferID: transferID, plan: plan, body: body, response: response, base: base)
        }
    }
}
