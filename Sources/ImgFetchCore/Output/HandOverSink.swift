import Dispatch

/// The sink of a writer of its own (`DownloaderConfiguration.outputs` `.handedOver`), such as
/// `DatasetWriter`'s shards: each output handed to every caller of its transfer as one shared
/// `OutputFile`, with the body's hash and its Last-Modified. Nothing is named, placed or indexed,
/// and nothing is kept for a later caller of the URL, which is fetched again.
final class HandOverSink: OutputSink {
    let configuration: DownloaderConfiguration
    let stage: OutputStage

    init(configuration: DownloaderConfiguration, stage: OutputStage) {
        self.configuration = configuration
        self.stage = stage
    }

    /// The name of every item: none.
    static let noName = OutputName(stem: "", givenExtension: nil, isExplicit: true)

    var index: CacheIndex? { nil }
    /// A body handed over is read where it is, in memory when it is small.
    var takesFiles: Bool { false }

    func name(for url: ParsedURL, explicitName: String?) throws(DownloadError) -> OutputName { Self.noName }

    func plan(key: String, name: OutputName) -> CachePlan { .download(owner: nil) }

    /// Every body's SHA-256 (and `bodyDigests`) is taken (`DownloadResult.bodyDigests`): a writer of
    /// its own has no index to compare with, and records it.
    func digestsBody(_ plan: CachePlan) -> Bool { true }

    /// Hands the output to every caller of the transfer.
    func take(_ output: PreparedOutput, key: String, transferID: Int, plan: CachePlan, body: ReceivedBody,
              response: ResponseMetadata, base: DownloadResult) {
        var result = base
        result.bodyDigests = body.digests
        result.exif = output.exif
        if configuration.saveAs == .original { result.contentHash = body.sha256 }
        result.lastModified = ResponseCacheHeaders(fields: response.headers).lastModified
            .flatMap(HTTPDate.parse).map { Int64($0) }
        do {
            let file = try OutputFile(output.file)
            result.handedOver = file
            if configuration.saveAs != .original { result.outputBytes = Int64(file.size) }
            result.status = .saved
        } catch {
            result.error = error
        }
        guard case .done(let subscribers) = stage.registry.complete(key: key, transferID: transferID, item: nil,
                                                                    isPlaced: { _ in true }) else { return }
        stage.deliver(subscribers.map { ($0, result) }, afterIndexChanges: false)
        // The body is in a temp file on the output's file system: see what room is left.
        stage.diskSpace.check()
    }

    // No output is kept or indexed, so none is revalidated or served without a request: these
    // are never called. Should one be, its callers still get an answer.

    func finishNotModified(key: String, transferID: Int, plan: CachePlan, response: ResponseMetadata) {
        stage.fail(key: key, transferID: transferID,
                   .failed(DownloadError(.http, "HTTP 304 to a request that was not conditional"), attempts: response.attempts,
                           httpStatus: 304))
    }

    func serveRepeat(_ subscriber: Subscriber, key: String, from item: FinishedItem) {
        stage.deliver([(subscriber, item.result)], afterIndexChanges: false, coalesced: true)
    }

    func serveWithoutRequest(_ subscriber: Subscriber, plan: CachePlan) {
        stage.cancel([subscriber], with: .failed(DownloadError(.notCached, "outputs handed over are never served from an index")))
    }
}
