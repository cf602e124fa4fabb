/// Shrinks a stream of rows to an exact smaller size by area averaging (a box filter with exact
/// fractional coverage), holding only two rows of accumulators. Each output pixel is the mean of
/// the source area it covers; with alpha (4 channels) colors are averaged weighted by alpha, so
/// transparent pixels do not darken their neighbours.
final class BoxDownscaler: RowSink {
    private let sourceWidth: Int
    private let sourceHeight: Int
    private let targetWidth: Int
    private let targetHeight: Int
    private let channels: Int
    private let next: RowSink
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
    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, channels: Int, next: RowSink) {
        precondition(targetWidth >= 1 && targetWidth <= sourceWidth && targetHeight >= 1 && targetHeight <= sourceHeight)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.channels = channels
        self.next = next
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
        output = .allocate(capacity: sums)
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
        sumHorizontally(row)
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
    private func sumHorizontally(_ row: UnsafePointer<UInt8>) {
        horizontal.update(repeating: 0, count: targetWidth * channels)
        let alpha = channels == 4
        for x in 0..<sourceWidth {
            let target = columnTarget[x] * channels
            let first = columnWeight[x]
            let second = targetWidth - first
            let pixel = row + x * channels
            let a = alpha ? Int(pixel[3]) : 1
            for c in 0..<channels {
                let value = alpha && c < 3 ? Int(pixel[c]) * a : Int(pixel[c])
                horizontal[target + c] += value * first
                if second > 0 { horizontal[target + channels + c] += value * second }
            }
        }
    }

    /// Turns the finished accumulator row into pixels and passes it on.
    private func emit() throws(DownloadError) {
        let area = sourceWidth * sourceHeight
        if channels == 4 {
            for x in 0..<targetWidth {
                let sums = current + 4 * x
                let alpha = sums[3]
                output[4 * x + 3] = UInt8((alpha + area / 2) / area)
                for c in 0..<3 {
                    output[4 * x + c] = alpha > 0 ? UInt8((sums[c] + alpha / 2) / alpha) : 0
                }
            }
        } else {
            for i in 0..<(targetWidth * channels) {
                output[i] = UInt8((current[i] + area / 2) / area)
            }
        }
        swap(&current, &pending)
        pending.update(repeating: 0, count: targetWidth * channels)
        outputRow += 1
        try next.consume(output)
    }
}
