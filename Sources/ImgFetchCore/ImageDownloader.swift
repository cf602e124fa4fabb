import Synchronization

/// The library's front door: download images concurrently and save them verified and atomically.
///
/// Every request is fetched by the engine thread, handed to the decode stage, and reported to its
/// completion handler exactly once, on a decode-stage or engine thread.
public final class ImageDownloader: Sendable {
    public let configuration: DownloaderConfiguration
    private let engine: Engine
    private let decodeStage: DecodeStage
    private let nextTransferID = Atomic<Int>(0)

    public init(configuration: DownloaderConfiguration) throws(DownloadError) {
        self.configuration = configuration
        engine = try Engine(configuration: configuration)
        decodeStage = DecodeStage(configuration: configuration)
    }

    /// Fetches `request.url` and saves it as `request.name`; `completion` receives the one result.
    public func download(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void) {
        let id = nextTransferID.add(1, ordering: .relaxed).newValue
        let transfer = Transfer(id: id, url: request.url, directory: configuration.outputDirectory,
                                maxSize: configuration.maxSize) { [engine, decodeStage] outcome in
            switch outcome {
            case .fetched(let body):
                decodeStage.submit(body, name: request.name) { result in
                    engine.release()
                    completion(result)
                }
            case .failed(let error, let attempts, let httpStatus):
                engine.release()
                completion(.failed(error, attempts: attempts, httpStatus: httpStatus))
            }
        }
        engine.submit(transfer)
    }

    /// Waits for every submitted download to finish, then stops the engine and the decode stage.
    /// Call it once, after the last `download`, when all completions have arrived or will arrive.
    public func close() {
        engine.close()
        decodeStage.close()
    }
}
