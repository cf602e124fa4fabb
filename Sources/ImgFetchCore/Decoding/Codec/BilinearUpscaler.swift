/// Enlarges a stream of rows to an exact larger size (`--upscale`) by bilinear interpolation
/// between pixel centers, holding two interpolated rows. With alpha (the last of 2 or 4 channels)
/// the colors are weighted by alpha, so transparent pixels do not bleed their color into the
/// edges. Rows of 8- and 16-bit samples (see `PixelLayout`) come out in the layout they came in.
final class BilinearUpscaler: RowSink {
    private let sourceHeight: Int
    private let targetWidth: Int
    private let targetHeight: Int
    private let layout: PixelLayout
    private let channels: Int
    private let next: RowSink
    /// Per output column: the two source columns it lies between, and the weight of the second.
    private let left: [Int]
    private let right: [Int]
    private let rightWeight: [Double]
    /// The last two source rows, interpolated to the output width (colors premultiplied by alpha).
    private var previous: [Double]
    private var current: [Double]
    private let output: UnsafeMutablePointer<UInt8>
    private var sourceRow = 0
    private var outputRow = 0

    /// Scales `sourceWidth` × `sourceHeight` up to `targetWidth` × `targetHeight` (each at least
    /// the source side) and feeds the result to `next`.
    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, layout: PixelLayout, next: RowSink) {
        precondition(sourceWidth >= 1 && sourceHeight >= 1 && targetWidth >= sourceWidth && targetHeight >= sourceHeight)
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.layout = layout
        channels = layout.channels
        self.next = next
        var left: [Int] = [], right: [Int] = [], weight: [Double] = []
        for x in 0..<targetWidth {
            let (first, fraction) = Self.position(x, source: sourceWidth, target: targetWidth)
            left.append(first)
            right.append(min(first + 1, sourceWidth - 1))
            weight.append(fraction)
        }
        self.left = left
        self.right = right
        rightWeight = weight
        previous = Array(repeating: 0, count: targetWidth * layout.channels)
        current = previous
        output = .allocate(capacity: layout.rowBytes(width: targetWidth))
    }

    deinit {
        output.deallocate()
    }

    /// Where output position `i`'s center falls in the source: the source index before it and the
    /// fraction of the way to the next one (pixel centers aligned; clamped at the edges).
    static func position(_ i: Int, source: Int, target: Int) -> (Int, Double) {
        let center = max(0, (Double(i) + 0.5) * Double(source) / Double(target) - 0.5)
        let first = min(Int(center), source - 1)
        return (first, first == source - 1 ? 0 : center - Double(first))
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        precondition(sourceRow < sourceHeight, "more rows than the source height")
        swap(&previous, &current)
        if layout.bitDepth == 16 {
            UnsafeRawPointer(row).withMemoryRebound(to: UInt16.self, capacity: left.count * channels) { interpolate($0) }
        } else {
            interpolate(row)
        }
        // Emit every output row that lies at or before this source row.
        while outputRow < targetHeight {
            let (first, fraction) = Self.position(outputRow, source: sourceHeight, target: targetHeight)
            let needed = fraction > 0 ? first + 1 : first
            guard needed <= sourceRow else { break }
            // Between the previous row and this one, or this row alone.
            try emit(weight: fraction > 0 ? fraction : 1)
        }
        sourceRow += 1
    }

    func finish() throws(DownloadError) {
        try next.finish()
    }

    /// Fills `current` with the row interpolated to the output width.
    private func interpolate<Sample: FixedWidthInteger>(_ row: UnsafePointer<Sample>) {
        let alphaChannel = layout.hasAlpha ? channels - 1 : -1
        for x in 0..<targetWidth {
            let a = row + left[x] * channels, b = row + right[x] * channels
            let wb = rightWeight[x], wa = 1 - wb
            let alphaA = alphaChannel >= 0 ? Double(a[alphaChannel]) : 1
            let alphaB = alphaChannel >= 0 ? Double(b[alphaChannel]) : 1
            for c in 0..<channels {
                let value = c == alphaChannel ? Double(a[c]) * wa + Double(b[c]) * wb
                    : Double(a[c]) * alphaA * wa + Double(b[c]) * alphaB * wb
                current[x * channels + c] = value
            }
        }
    }

    /// Blends the previous and current interpolated rows, `weight` of the current one, into the
    /// next output row.
    private func emit(weight w: Double) throws(DownloadError) {
        if layout.bitDepth == 16 {
            UnsafeMutableRawPointer(output).withMemoryRebound(to: UInt16.self, capacity: targetWidth * channels) { store($0, w) }
        } else {
            store(output, w)
        }
        outputRow += 1
        try next.consume(output)
    }

    private func store<Sample: FixedWidthInteger>(_ samples: UnsafeMutablePointer<Sample>, _ weight: Double) {
        let maxSample = Double(layout.maxSample)
        let alphaChannel = layout.hasAlpha ? channels - 1 : -1
        for x in 0..<targetWidth {
            let base = x * channels
            let alpha = alphaChannel >= 0 ? previous[base + alphaChannel] * (1 - weight) + current[base + alphaChannel] * weight : 1
            for c in 0..<channels {
                var value = previous[base + c] * (1 - weight) + current[base + c] * weight
                if c != alphaChannel { value = alpha > 0 ? value / alpha : 0 }
                samples[base + c] = Sample(min(maxSample, max(0, value.rounded())))
            }
        }
    }
}
