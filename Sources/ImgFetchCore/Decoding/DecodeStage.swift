/// Checks fetched bodies on a pool of worker threads, never on the engine thread: sniff the
/// format, decode every decodable format fully, every frame (unless `--no-decode`), and write
/// decompressed pixels when asked. Formats without a decoder are saved unverified, or refused
/// with `--require-verified`. Images the filter does not keep (`--min-size`, `--max-aspect-ratio`)
/// are refused from their header, before any decode.
///
/// The pool's backlog is bounded by the engine's admission: a body counts against
/// `decodeBacklog` until its consumer releases it. The memory of concurrent decodes is bounded by
/// `memory` (see `DecodeMemoryBudget`).
final class DecodeStage: Sendable {
    /// The workers, `imgfetch.decode.0` … `.N-1`, each taking one job at a time.
    private let pool: Executor<@Sendable () -> Void>
    private let configuration: DownloaderConfiguration
    private let tempFiles: TempFileDirectory
    /// Whether a small body kept in memory is written out to its temp file, which the sink
    /// places (`OutputSink.takesFiles`).
    private let writesBodiesOut: Bool
    let memory: DecodeMemoryBudget

    /// Most bytes that large decodes (progressive JPEGs above all) hold at once: one 12-megapixel
    /// progressive JPEG (36 MB) at a time, or a few smaller ones together.
    static let defaultDecodeMemory = 32 << 20
    /// Decodes estimated at this or less stream a few rows and never wait for the budget.
    static let exemptDecodeMemory = 2 << 20

    init(configuration: DownloaderConfiguration, tempFiles: TempFileDirectory, writesBodiesOut: Bool,
         memoryBudget: Int = defaultDecodeMemory) {
        pool = Executor(threadNames: (0..<max(1, configuration.effectiveDecodeThreads)).map { "imgfetch.decode.\($0)" }) { jobs in
            for job in jobs { job() }
        }
        self.configuration = configuration
        self.tempFiles = tempFiles
        self.writesBodiesOut = writesBodiesOut
        memory = DecodeMemoryBudget(limit: memoryBudget, exempt: Self.exemptDecodeMemory)
    }

    /// Stops the decodes running now at their next row or scan, and every later one at its first
    /// (they fail as `cancelled`): a run being cancelled must not wait seconds for a large image.
    let cancellation = DecodeCancellation()

    /// The run's limits, with this stage's cancellation.
    private var decodeLimits: DecodeLimits {
        var limits = configuration.decodeLimits
        limits.cancellation = cancellation
        return limits
    }

    /// Runs `job` on a worker thread.
    func run(_ job: @escaping @Sendable () -> Void) {
        pool.submit(job)
    }

    /// What a body is and what to save for it, or why it is rejected. A body to be saved as it is
    /// has its temp file complete on disk afterwards (it is decoded from memory when small).
    func prepare(_ body: ReceivedBody) -> Result<PreparedOutput, DownloadError> {
        let format: ImageFormat
        switch ImageSniffer.sniff(body.head) {
        case .image(let sniffed): format = sniffed
        case .notAnImage(let description): return .failure(DownloadError(.notAnImage, description))
        }
        let file = body.tempFile
        if !format.isDecodable && configuration.requireVerified {
            return .failure(DownloadError(.unverified, "\(format.displayName) image not verified: imgfetch cannot decode "
                + "\(format.displayName) (--require-verified)"))
        }
        if let rejection = filtered(file, format: format) { return .failure(rejection) }
        // Read from the body before it is converted, which never writes the body out.
        let exif = configuration.extractsExif ? file.withContents { ExifReader.json($0, format: format) } : nil
        return check(body, format: format).map { output in
            var output = output
            output.exif = exif
            return output
        }
    }

    /// The body verified (or converted) as `--save-as` says.
    private func check(_ body: ReceivedBody, format: ImageFormat) -> Result<PreparedOutput, DownloadError> {
        let file = body.tempFile
        switch configuration.saveAs {
        case .original:
            let checked: Result<ImageInfo?, DownloadError>
            if !format.isDecodable {
                checked = .success(nil)
            } else if !configuration.verifyImages {
                checked = .success(file.withContents { ImageCodec.probe($0, format: format) })
            } else {
                checked = file.withContents { ImageCodec.verify($0, format: format, limits: decodeLimits, budget: memory) }
                    .map { $0 }
            }
            return checked.flatMap { image in
                Result { () throws(DownloadError) in
                    // A body handed over is read where it is, in memory when it is small.
                    if writesBodiesOut { try file.writeOut() }
                    return PreparedOutput(format: format, image: image, file: file)
                }
            }
        case .pixels(let pixelFormat):
            guard format.isDecodable else {
                return .failure(DownloadError(.notAnImage, "cannot convert \(format.displayName) to "
                    + "\(pixelFormat.rawValue.uppercased()): imgfetch cannot decode \(format.displayName)"))
            }
            return convert(body, format: format, to: pixelFormat)
        }
    }

    /// Why the filter (`--min-size`, `--max-aspect-ratio`) does not keep the image, from its header
    /// alone; nil when it is kept, or when the header does not read and the decode will say why
    /// (without one, `--no-decode`, an image whose size cannot be read is not kept).
    private func filtered(_ file: TempFile, format: ImageFormat) -> DownloadError? {
        let filter = configuration.filter
        guard !filter.keepsAll else { return nil }
        guard format.isDecodable else {
            return DownloadError(.unverified, "cannot check the size of a \(format.displayName) image for "
                + (filter.minSide > 0 ? "--min-size" : "--max-aspect-ratio") + ": imgfetch cannot decode \(format.displayName)")
        }
        guard let info = file.withContents({ ImageCodec.probe($0, format: format) }) else {
            return configuration.verifyImages ? nil : DownloadError(.notAnImage, "the \(format.displayName) header does not "
                + "read, so the image's size cannot be checked for " + (filter.minSide > 0 ? "--min-size" : "--max-aspect-ratio"))
        }
        return filter.rejection(width: info.width, height: info.height)
    }

    /// Decodes the body into a new temp file of pixels; the body itself is never written out.
    private func convert(_ body: ReceivedBody, format: ImageFormat, to pixelFormat: PixelFormat) -> Result<PreparedOutput, DownloadError> {
        let output: TempFile
        do {
            output = try tempFiles.create()
        } catch {
            return .failure(error)
        }
        let conversion = ImageConversion(pixelFormat: pixelFormat, resize: configuration.resize,
                                         output: output.writeDescriptor, scratchDirectory: configuration.outputDirectory,
                                         memoryBudget: ImageCodec.defaultPixelMemory, quality: configuration.quality,
                                         background: configuration.background)
        return body.tempFile.withContents {
            ImageCodec.convert($0, format: format, conversion: conversion, limits: decodeLimits, budget: memory)
        }
        .map { PreparedOutput(format: format, image: $0.source, file: output) }
    }

    func close() {
        pool.close()
    }
}
