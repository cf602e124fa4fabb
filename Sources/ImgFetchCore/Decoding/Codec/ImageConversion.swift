/// One conversion: pumps a started decoder's rows through downscaling and orientation into a PNG or
/// Netpbm writer, keeping the source's channels and bit depth (see `PixelLayout`). Memory stays
/// bounded: rows stream, and whole-image steps use a `Raster`. An animation writes its first frame.
struct ImageConversion {
    var pixelFormat: PixelFormat
    var maxDimension: Int?
    var output: Int32
    var scratchDirectory: String
    var memoryBudget: Int

    /// Bytes this conversion holds besides the decoder: a whole-image raster (within `memoryBudget`;
    /// more spills to disk) for a rotated or flipped output or an interlaced PNG, else a few rows.
    /// Samples may be 16-bit, so a pixel counts 8 bytes.
    func heldMemory(for decoder: ImageDecoder) -> Int {
        let info = decoder.info
        let rows = info.width * 8 * 4
        let wholeImage = info.orientation != ExifOrientation.up.rawValue || (decoder.format == .png && decoder.isProgressive)
        return wholeImage ? rows + min(memoryBudget, info.width * info.height * 8) : rows
    }

    func run(decoder: ImageDecoder) throws(DownloadError) -> ConvertedImage {
        let info = decoder.info
        var plan = ScalePlan(width: info.width, height: info.height, maxDimension: maxDimension, format: decoder.format)
        try decoder.start(scaleNumerator: plan.dctNumerator)
        let decoded = decoder.output
        // The plan picks a DCT scale that never undershoots; clamping keeps the box filter safe regardless.
        plan.targetWidth = min(plan.targetWidth, decoded.width)
        plan.targetHeight = min(plan.targetHeight, decoded.height)
        let orientation = ExifOrientation(rawValue: info.orientation) ?? .up
        let size = orientation.outputSize(width: plan.targetWidth, height: plan.targetHeight)
        let layout = decoded.layout

        var sink: RowSink
        switch pixelFormat {
        case .png: sink = try PNGRowWriter(width: size.width, height: size.height, layout: layout, fd: output)
        case .ppm, .pam:
            sink = try NetpbmRowWriter(format: pixelFormat, width: size.width, height: size.height, layout: layout, fd: output)
        }
        if orientation != .up {
            sink = try OrientingSink(orientation: orientation, width: plan.targetWidth, height: plan.targetHeight,
                                     pixelBytes: layout.pixelBytes, next: sink, memoryBudget: memoryBudget,
                                     bandBudget: max(1 << 20, memoryBudget / 2), scratchDirectory: scratchDirectory)
        }
        if decoded.width != plan.targetWidth || decoded.height != plan.targetHeight {
            sink = BoxDownscaler(sourceWidth: decoded.width, sourceHeight: decoded.height,
                                 targetWidth: plan.targetWidth, targetHeight: plan.targetHeight, layout: layout, next: sink)
        }
        try pumpRows(from: decoder, into: sink)
        // The trailer is checked before the last stage writes anything it held back.
        try decoder.finish()
        try sink.finish()
        var source = info
        source.verified = true
        source.outputWidth = size.width
        source.outputHeight = size.height
        let written = pixelFormat == .ppm ? 3 : layout.channels
        return ConvertedImage(source: source, width: size.width, height: size.height, channels: written, bitDepth: layout.bitDepth)
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
