/// Turns fetched bodies into saved files on a pool of worker threads, never on the engine thread:
/// sniff the format, then commit the temp file to its final name atomically.
final class DecodeStage: Sendable {
    private let pool: WorkerPool
    private let outputDirectory: String
    private let existingFiles: ExistingFilePolicy

    init(configuration: DownloaderConfiguration) {
        pool = WorkerPool(threads: configuration.decodeThreads, name: "imgfetch.decode")
        outputDirectory = configuration.outputDirectory
        existingFiles = configuration.existingFiles
    }

    func submit(_ body: FetchedBody, name: OutputName, completion: @escaping @Sendable (DownloadResult) -> Void) {
        pool.submit { [self] in completion(process(body, name: name)) }
    }

    func close() {
        pool.close()
    }

    func process(_ body: FetchedBody, name: OutputName) -> DownloadResult {
        var result = DownloadResult(status: .failed)
        result.httpStatus = body.httpStatus
        result.bytes = body.bytes
        result.attempts = body.attempts
        switch ImageSniffer.sniff(body.head) {
        case .notAnImage(let description):
            result.error = DownloadError(.notAnImage, description)
        case .image(let format):
            result.format = format
            let path = OutputPaths.join(outputDirectory, name.fileName(for: format))
            do {
                switch try body.tempFile.commit(to: path, overwrite: existingFiles == .overwrite) {
                case .saved: result.status = .saved
                case .existed: result.status = .skipped
                }
                result.paths = [path]
            } catch {
                result.error = error
            }
        }
        return result
    }
}
