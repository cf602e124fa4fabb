/// One conversion: pumps a started decoder's rows through scaling, orientation and a crop or pad
/// (`Resize`) into a PNG, Netpbm or JPEG writer, keeping the source's channels and bit depth (see
/// `PixelLayout`) where the format can. Memory stays bounded: rows stream, and whole-image steps
/// use a `Raster`. An animation writes its first frame.
struct ImageConversion {
    var pixelFormat: PixelFormat
    var resize: Resize?
    var output: Int32
    var scratchDirectory: String
    var memoryBudget: Int
    /// The quality of a lossy `pixelFormat` (1-100); nil: the format's default.
    var quality: Int?
    /// What transparency is composited onto for an output without alpha (JPEG).
    var background = Resize.Color.white
    var purpose = Purpose.output

    /// What the pixels are for.
    enum Purpose {
        /// A saved image in `pixelFormat`: lossless (the source's channels and depth), and the
        /// trailer and every later frame decoded too, as verification does.
        case output
        /// A thumbnail of a file verified when it was saved: the first frame's rows only, 8-bit, as
        /// a JPEG when opaque and a quickly compressed PNG with alpha (`previewFormat`);
        /// `pixelFormat` is not used.
        case preview
    }

    /// The file format of a preview with `channels` channels: JPEG is a fraction of a PNG's size
    /// (a 256 px thumbnail of a noisy photo: about 8 KB instead of 76), but has no alpha.
    static func previewFormat(channels: Int) -> ImageFormat {
        channels == 2 || channels == 4 ? .png : .jpeg
    }

    /// JPEG quality of previews.
    static let previewQuality = 80

    /// Bytes this conversion holds besides the decoder: a few rows of the widest stage (the
    /// upscaler's two rows of doubles are the widest per pixel), a whole-image raster (within
    /// `memoryBudget`; more spills to disk) for a rotated or flipped output (of the scaled size)
    /// or an interlaced PNG (of the decoded size), and a WebP writer's whole picture. Samples may
    /// be 16-bit, so a pixel counts 8 bytes.
    func heldMemory(for decoder: ImageDecoder) -> Int {
        let info = decoder.info
        let plan = ScalePlan(width: info.width, height: info.height, resize: resize,
                             orientation: ExifOrientation(rawValue: info.orientation) ?? .up, format: decoder.format,
                             fastest: purpose == .preview)
        var held = max(info.width, plan.targetWidth, plan.canvasWidth, plan.canvasHeight) * 64
        if info.orientation != ExifOrientation.up.rawValue {
            held += min(memoryBudget, plan.targetWidth * plan.targetHeight * 8)
        }
        if decoder.format == .png && decoder.isProgressive {
            held += min(memoryBudget, info.width * info.height * 8)
        }
        if purpose == .output && pixelFormat == .webp {
            held += WebPRowWriter.heldMemory(width: plan.canvasWidth, height: plan.canvasHeight)
        }
        return held
    }

    func run(decoder: ImageDecoder) throws(DownloadError) -> ConvertedImage {
        let info = decoder.info
        let orientation = ExifOrientation(rawValue: info.orientation) ?? .up
        var plan = ScalePlan(width: info.width, height: info.height, resize: resize, orientation: orientation, format: decoder.format,
                             fastest: purpose == .preview)
        let limit = decoder.limits.maxPixels
        if limit > 0, plan.targetWidth * plan.targetHeight > limit || plan.canvasWidth * plan.canvasHeight > limit {
            throw DownloadError(.tooLarge, "upscaled to \(plan.targetWidth)×\(plan.targetHeight), the image would exceed "
                + "the limit of \(limit) pixels (--max-pixels)")
        }
        try decoder.start(scaleNumerator: plan.dctNumerator)
        let decoded = decoder.output
        // The plan picks a DCT scale that never undershoots; clamping keeps the box filter safe regardless.
        if plan.dctNumerator < 8 {
            plan.targetWidth = min(plan.targetWidth, decoded.width)
            plan.targetHeight = min(plan.targetHeight, decoded.height)
        }
        let scaled = orientation.outputSize(width: plan.targetWidth, height: plan.targetHeight)
        let size = (width: plan.canvasWidth, height: plan.canvasHeight)
        let layout = decoded.layout
        let preview = purpose == .preview
        let eightBit = preview || pixelFormat == .jpeg || pixelFormat == .webp
        let written = eightBit ? PixelLayout(channels: layout.channels, bitDepth: 8) : layout
        // JPEG has no alpha: such sources are composited onto `background` on the way.
        let flattens = purpose == .output && pixelFormat == .jpeg && (layout.channels == 2 || layout.channels == 4)

        var sink: RowSink
        switch (purpose, pixelFormat) {
        case (.preview, _) where Self.previewFormat(channels: written.channels) == .jpeg:
            sink = try JPEGRowWriter(width: size.width, height: size.height, layout: written, quality: Self.previewQuality, fd: output)
        case (.preview, _):
            sink = try PNGRowWriter(width: size.width, height: size.height, layout: written, fd: output, prefersSpeed: true)
        case (.output, .png):
            sink = try PNGRowWriter(width: size.width, height: size.height, layout: written, fd: output)
        case (.output, .ppm), (.output, .pam):
            sink = try NetpbmRowWriter(format: pixelFormat, width: size.width, height: size.height, layout: written, fd: output)
        case (.output, .jpeg):
            let color = PixelLayout(channels: flattens ? layout.channels - 1 : layout.channels, bitDepth: 8)
            sink = try JPEGRowWriter(width: size.width, height: size.height, layout: color,
                                     quality: quality ?? PixelFormat.jpeg.defaultQuality!, fd: output)
            if flattens { sink = AlphaFlattener(width: size.width, channels: layout.channels, background: background, next: sink) }
        case (.output, .webp):
            sink = try WebPRowWriter(width: size.width, height: size.height, layout: written,
                                     quality: quality ?? PixelFormat.webp.defaultQuality!, fd: output)
        }
        if written != layout {
            sink = SampleDepthReducer(width: size.width, channels: layout.channels, next: sink)
        }
        if size != scaled {
            sink = CanvasSink(imageWidth: scaled.width, imageHeight: scaled.height, canvasWidth: size.width,
                              canvasHeight: size.height, fill: CanvasSink.fill(resize?.padColor ?? .white, layout: layout), next: sink)
        }
        if orientation != .up {
            sink = try OrientingSink(orientation: orientation, width: plan.targetWidth, height: plan.targetHeight,
                                     pixelBytes: layout.pixelBytes, next: sink, memoryBudget: memoryBudget,
                                     bandBudget: max(1 << 20, memoryBudget / 2), scratchDirectory: scratchDirectory)
        }
        if plan.targetWidth > decoded.width || plan.targetHeight > decoded.height {
            sink = BilinearUpscaler(sourceWidth: decoded.width, sourceHeight: decoded.height,
                                    targetWidth: plan.targetWidth, targetHeight: plan.targetHeight, layout: layout, next: sink)
        } else if decoded.width != plan.targetWidth || decoded.height != plan.targetHeight {
            sink = BoxDownscaler(sourceWidth: decoded.width, sourceHeight: decoded.height,
                                 targetWidth: plan.targetWidth, targetHeight: plan.targetHeight, layout: layout, next: sink)
        }
        try pumpRows(from: decoder, into: sink)
        // The trailer is checked before the last stage writes anything it held back.
        if !preview { try decoder.finish() }
        try sink.finish()
        var source = info
        source.verified = true
        source.outputWidth = size.width
        source.outputHeight = size.height
        let channels = switch pixelFormat {
        case _ where preview: layout.channels
        case .ppm: 3
        case .webp: layout.hasAlpha ? 4 : 3
        case .jpeg where flattens: layout.channels - 1
        case .png, .pam, .jpeg: layout.channels
        }
        return ConvertedImage(source: source, width: size.width, height: size.height, channels: channels, bitDepth: written.bitDepth)
    }

    /// Feeds every decoded row to `sink`. Interlaced PNG rows are assembled over libpng's seven
    /// passes in a raster (in memory within the budget, otherwise on disk) and then streamed.
    private func pumpRows(from decoder: ImageDecoder, into sink: RowSink) throws(DownloadError) {
        let decoded = decoder.output
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, decoded.rowBytes))
        defer { row.deallocate() }
        guard decoded.passes > 1 else {
            for _ in 0..<decoded.height {
                try decoder.readRow(into: row)
                try sink.consume(row)
            }
            return
        }
        let raster = try Raster(width: decoded.width, height: decoded.height, pixelBytes: decoded.layout.pixelBytes,
                                memoryBudget: memoryBudget, scratchDirectory: scratchDirectory)
        for pass in 0..<decoded.passes {
            for y in 0..<decoded.height {
                guard decoder.rowInPass(y, pass: pass) else {
                    try decoder.readRow(into: row)  // libpng leaves the buffer alone for rows outside the pass
                    continue
                }
                try raster.read(row: y, into: row)
                try decoder.readRow(into: row)
                try raster.write(row: y, from: row)
            }
        }
        for y in 0..<decoded.height {
            try raster.read(row: y, into: row)
            try sink.consume(row)
        }
    }
}
