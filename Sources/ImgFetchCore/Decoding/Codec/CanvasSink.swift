/// Puts a stream of rows in the middle of a canvas of another size: the parts outside the canvas
/// are cut off (`--fit center-crop`), the parts of the canvas outside the image are filled with
/// one pixel value (`--fit pad`). When a side's difference is odd, the extra pixel is cut or
/// filled at the right or bottom.
final class CanvasSink: RowSink {
    private let imageWidth: Int
    private let imageHeight: Int
    private let canvasWidth: Int
    private let canvasHeight: Int
    private let pixelBytes: Int
    private let fill: [UInt8]
    /// Where the image's top-left pixel lies on the canvas (negative: cut off).
    private let left: Int
    private let top: Int
    private let next: RowSink
    /// One canvas row, filled with the pad pixel outside the image.
    private let row: UnsafeMutablePointer<UInt8>
    private var imageRow = 0
    private var canvasRow = 0

    /// `fill` is one pixel in the rows' layout.
    init(imageWidth: Int, imageHeight: Int, canvasWidth: Int, canvasHeight: Int, fill: [UInt8], next: RowSink) {
        precondition(imageWidth >= 1 && imageHeight >= 1 && canvasWidth >= 1 && canvasHeight >= 1 && !fill.isEmpty)
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        pixelBytes = fill.count
        self.fill = fill
        left = Self.offset(canvas: canvasWidth, image: imageWidth)
        top = Self.offset(canvas: canvasHeight, image: imageHeight)
        self.next = next
        row = .allocate(capacity: canvasWidth * fill.count)
        fillRow()
    }

    deinit {
        row.deallocate()
    }

    /// The image's offset on the canvas: half the difference, rounded down in magnitude.
    static func offset(canvas: Int, image: Int) -> Int {
        canvas >= image ? (canvas - image) / 2 : -((image - canvas) / 2)
    }

    /// The fill pixel for `color` in `layout`: gray images get its luma, alpha is opaque, and
    /// 16-bit samples are in native byte order.
    static func fill(_ color: Resize.Color, layout: PixelLayout) -> [UInt8] {
        var samples: [Int] = layout.channels <= 2 ? [Int(color.luma)] : [Int(color.red), Int(color.green), Int(color.blue)]
        if layout.hasAlpha { samples.append(255) }
        guard layout.bitDepth == 16 else { return samples.map { UInt8($0) } }
        return samples.flatMap { sample -> [UInt8] in
            withUnsafeBytes(of: UInt16(sample * 257)) { Array($0) }
        }
    }

    func consume(_ input: UnsafePointer<UInt8>) throws(DownloadError) {
        precondition(imageRow < imageHeight, "more rows than the image height")
        if imageRow == 0 { try emitFill(until: max(0, top)) }
        let y = imageRow + top
        imageRow += 1
        guard y >= 0 && y < canvasHeight else { return }
        // The part of the image row that lies on the canvas.
        let first = max(0, -left), last = min(imageWidth, canvasWidth - left)
        (row + (first + left) * pixelBytes).update(from: input + first * pixelBytes, count: (last - first) * pixelBytes)
        try next.consume(row)
        canvasRow += 1
    }

    private func fillRow() {
        for x in 0..<canvasWidth {
            for (i, byte) in fill.enumerated() { row[x * pixelBytes + i] = byte }
        }
    }

    func finish() throws(DownloadError) {
        try emitFill(until: canvasHeight)
        try next.finish()
    }

    /// Emits rows of fill alone until `limit` canvas rows are out.
    private func emitFill(until limit: Int) throws(DownloadError) {
        guard canvasRow < limit else { return }
        // The image's span of the row holds the last image row's pixels: fill it again.
        if imageRow > 0 { fillRow() }
        while canvasRow < limit {
            try next.consume(row)
            canvasRow += 1
        }
    }
}
