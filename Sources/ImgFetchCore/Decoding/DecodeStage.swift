/// Checks fetched bodies on a pool of worker threads, never on the engine thread: sniff the
/// format, decode JPEG and PNG fully (unless `--no-decode`), and write decompressed pixels when
/// asked.
///
/// The pool's backlog is bounded by the engine's admission: a body counts against
/// `decodeBacklog` until its consumer releases it.
final class DecodeStage: Sendable {
    private let pool: WorkerPool
    private let configuration: DownloaderConfiguration

    init(configuration: DownloaderConfiguration) {
        pool = WorkerPool(threads: configuration.decodeThreads, name: "imgfetch.decode")
        self.configuration = configuration
    }

    /// Runs `job` on a worker thread.
    func run(_ job: @escaping @Sendable () -> Void) {
        pool.submit(job)
    }

    /// What a body is and what to save for it, or why it is rejected.
    func prepare(_ body: FetchedBody) -> Result<PreparedOutput, DownloadError> {
        let format: ImageFormat
        switch ImageSniffer.sniff(body.head) {
        case .image(let sniffed): format = sniffed
        case .notAnImage(let description): return .failure(DownloadError(.notAnImage, description))
        }
        let decodable = format == .jpeg || format == .png
        switch configuration.saveAs {
        case .original:
            guard decodable else { return .success(PreparedOutput(format: format, image: nil, file: body.tempFile)) }
            guard configuration.verifyImages else {
                let probed = ImageCodec.probe(path: body.tempFile.path, format: format)
                return .success(PreparedOutput(format: format, image: probed, file: body.tempFile))
            }
            return ImageCodec.verify(path: body.tempFile.path, format: format, limits: configuration.decodeLimits)
                .map { PreparedOutput(format: format, image: $0, file: body.tempFile) }
        case .pixels(let pixelFormat):
            guard decodable else {
                return .failure(DownloadError(.notAnImage, "cannot convert \(format.rawValue.uppercased()) to "
                    + "\(pixelFormat.rawValue.uppercased()): only JPEG and PNG are decoded"))
            }
            return convert(body, format: format, to: pixelFormat)
        }
    }

    private func convert(_ body: FetchedBody, format: ImageFormat, to pixelFormat: PixelFormat) -> Result<PreparedOutput, DownloadError> {
        let output: TempFile
        do {
            output = try TempFile.create(in: configuration.outputDirectory)
        } catch {
            return .failure(error)
        }
        return ImageCodec.convert(path: body.tempFile.path, format: format, to: pixelFormat,
                                  maxDimension: configuration.maxDimension, limits: configuration.decodeLimits,
                                  output: output.writeDescriptor, scratchDirectory: configuration.outputDirectory)
            .map { PreparedOutput(format: format, image: $0.source, file: output) }
    }

    func close() {
        pool.close()
    }
}
