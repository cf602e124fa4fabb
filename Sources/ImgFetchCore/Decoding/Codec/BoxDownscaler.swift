/// Shrinks a stream of rows to an exact smaller size by area averaging (a box filter with exact
/// fractional coverage), holding only two rows of accumulators. Each output pixel is the mean of
/// the source area it covers; with alpha (the last of 2 or 4 channels) the other channels are
/// averaged weighted by alpha, so transparent pixels do not darken their neighbours. Rows of 8-
/// and 16-bit samples (see `PixelLayout`) come out in the layout they came in.
final class BoxDownscaler: RowSink {
    private let sourceWidth: Int
    private let sourceHeight: Int
    private let targetWidth: Int
    private let targetHeight: Int
    private let layout: PixelLayout
    private let channels: Int
    private let next: RowSink
    /// Alpha is shifted right by this before it weights the colors, so that the sums stay within
    /// 64 bits for 16-bit sources of billions of pixels (0 for every image within the default limits).
    private let alphaShift: Int
    /// Per source column: the output column its left part falls into, and that part's weight
    /// (of targetWidth); the remainder goes to the column after.
    private let columnTarget: UnsafeMutablePointer<Int>
    private let columnWeight: UnsafeMutablePointer<Int>
    private let horizontal: UnsafeMutablePointer<Int>
    private var current: UnsafeMutablePointer<Int>
    private var pending: UnsafeMutablePointer<Int>
    private let output: UnsafeMutablePointer<UInt8>
    private var sourceRow = 0
    private var outputRow = 0

    /// Scales `sourceWidth` × `sourceHeight` down to `targetWidth` × `targetHeight` (each no larger
    /// than the source side, at least 1) and feeds the result to `next`.
    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, layout: PixelLayout, next: RowSink) {
        precondition(targetWidth >= 1 && targetWidth <= sourceWidth && targetHeight >= 1 && targetHeight <= sourceHeight)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.layout = layout
        channels = layout.channels
        self.next = next
        // A sum reaches sample × alpha × source area (the weights of one output pixel add up to the area).
        let area = Double(sourceWidth) * Double(sourceHeight)
        var shift = 0
        if layout.hasAlpha {
            while Double(layout.maxSample) * Double(layout.maxSample >> shift) * area > Double(Int.max / 2) { shift += 1 }
        }
        alphaShift = shift
        columnTarget = .allocate(capacity: sourceWidth)
        columnWeight = .allocate(capacity: sourceWidth)
        for x in 0..<sourceWidth {
            let target = x * targetWidth / sourceWidth
            columnTarget[x] = target
            columnWeight[x] = min((x + 1) * targetWidth, (target + 1) * sourceWidth) - x * targetWidth
        }
        let sums = targetWidth * channels
        horizontal = .allocate(capacity: sums)
        current = .allocate(capacity: sums)
        current.initialize(repeating: 0, count: sums)
        pending = .allocate(capacity: sums)
        pending.initialize(repeating: 0, count: sums)
        output = .allocate(capacity: layout.rowBytes(width: targetWidth))
    }

    deinit {
        columnTarget.deallocate()
        columnWeight.deallocate()
        horizontal.deallocate()
        current.deallocate()
        pending.deallocate()
        output.deallocate()
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        precondition(sourceRow < sourceHeight, "more rows than the source height")
        if layout.bitDepth == 16 {
            UnsafeRawPointer(row).withMemoryRebound(to: UInt16.self, capacity: sourceWidth * channels) { sumHorizontally($0) }
        } else {
            sumHorizontally(row)
        }
        let y = sourceRow
        let firstWeight = min((y + 1) * targetHeight, (outputRow + 1) * sourceHeight) - y * targetHeight
        let secondWeight = targetHeight - firstWeight
        for i in 0..<(targetWidth * channels) {
            current[i] += horizontal[i] * firstWeight
            pending[i] += horizontal[i] * secondWeight
        }
        sourceRow += 1
        if sourceRow * targetHeight >= (outputRow + 1) * sourceHeight {
            try emit()
        }
    }

    func finish() throws(DownloadError) {
        try next.finish()
    }

    /// Fills `horizontal` with the row's weighted sums per output column (colors premultiplied by alpha).
    private func sumHorizontally<Sample: FixedWidthInteger>(_ row: UnsafePointer<Sample>) {
        horizontal.update(repeating: 0, count: targetWidth * channels)
        let alphaChannel = layout.hasAlpha ? channels - 1 : -1
        for x in 0..<sourceWidth {
            let target = columnTarget[x] * channels
            let first = columnWeight[x]
            let second = targetWidth - first
            let pixel = row + x * channels
            let a = alphaChannel >= 0 ? Int(pixel[alphaChannel]) >> alphaShift : 1
            for c in 0..<channels {
                let value = alphaChannel >= 0 && c != alphaChannel ? Int(pixel[c]) * a : Int(pixel[c])
                horizontal[target + c] += value * first
                if second > 0 { horizontal[target + channels + c] += value * second }
            }
        }
    }

    /// Turns the finished accumulator row into pixels and passes it on.
    private func emit() throws(DownloadError) {
        if layout.bitDepth == 16 {
            UnsafeMutableRawPointer(output).withMemoryRebound(to: UInt16.self, capacity: targetWidth * channels) { store($0) }
        } else {
            store(output)
        }
        swap(&current, &pending)
        pending.update(repeating: 0, count: targetWidth * channels)
        outputRow += 1
        try next.consume(output)
    }

    /// Divides the sums of the finished row back to samples.
    private func store<Sample: FixedWidthInteger>(_ samples: UnsafeMutablePointer<Sample>) {
        let area = sourceWidth * sourceHeight
        guard layout.hasAlpha else {
            for i in 0..<(targetWidth * channels) { samples[i] = Sample((current[i] + area / 2) / area) }
            return
        }
        let alphaChannel = channels - 1
        for x in 0..<targetWidth {
            let sums = current + channels * x
            // The alpha sum is of unshifted samples; the colors were weighted by shifted alpha.
            let alpha = sums[alphaChannel]
            let weight = alpha >> alphaShift
            samples[channels * x + alphaChannel] = Sample((alpha + area / 2) / area)
            for c in 0..<alphaChannel {
                samples[channels * x + c] = weight > 0 ? Sample(min(layout.maxSample, (sums[c] + weight / 2) / weight)) : 0
            }
        }
    }
}
