/// Applies an EXIF orientation to a stream of rows with bounded memory. Mirroring streams; flips
/// and rotations store the rows in a `Raster` (on disk when large) and, after the last row, read
/// them back in output order: whole rows for flips, column bands of at most `bandBudget` bytes for
/// the transposing orientations 5–8.
final class OrientingSink: RowSink {
    private let orientation: ExifOrientation
    private let width: Int
    private let height: Int
    private let pixelBytes: Int
    private let next: RowSink
    private let raster: Raster?
    private let bandBudget: Int
    private let row: UnsafeMutablePointer<UInt8>
    private var rowsStored = 0

    /// Orients a stored `width` × `height` image; `next` receives rows of the oriented size.
    init(orientation: ExifOrientation, width: Int, height: Int, pixelBytes: Int, next: RowSink,
         memoryBudget: Int, bandBudget: Int, scratchDirectory: String) throws(DownloadError) {
        self.orientation = orientation
        self.width = width
        self.height = height
        self.pixelBytes = pixelBytes
        self.next = next
        self.bandBudget = bandBudget
        row = .allocate(capacity: max(width, height) * pixelBytes)
        switch orientation {
        case .up, .mirrored:
            raster = nil
        default:
            raster = try Raster(width: width, height: height, pixelBytes: pixelBytes,
                                memoryBudget: memoryBudget, scratchDirectory: scratchDirectory)
        }
    }

    deinit {
        row.deallocate()
    }

    func consume(_ input: UnsafePointer<UInt8>) throws(DownloadError) {
        switch orientation {
        case .up:
            try next.consume(input)
        case .mirrored:
            for x in 0..<width {
                (row + x * pixelBytes).update(from: input + (width - 1 - x) * pixelBytes, count: pixelBytes)
            }
            try next.consume(row)
        default:
            try raster!.write(row: rowsStored, from: input)
            rowsStored += 1
        }
    }

    func finish() throws(DownloadError) {
        if let raster {
            if orientation.transposes {
                try emitTransposed(raster)
            } else {
                try emitFlipped(raster)
            }
        }
        try next.finish()
    }

    /// Orientations 3 and 4: rows bottom to top, mirrored for 3.
    private func emitFlipped(_ raster: Raster) throws(DownloadError) {
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: width * pixelBytes)
        defer { scratch.deallocate() }
        for y in stride(from: height - 1, through: 0, by: -1) {
            if orientation == .downMirrored {
                try raster.read(row: y, into: row)
            } else {
                try raster.read(row: y, into: scratch)
                for x in 0..<width {
                    (row + x * pixelBytes).update(from: scratch + (width - 1 - x) * pixelBytes, count: pixelBytes)
                }
            }
            try next.consume(row)
        }
    }

    /// Orientations 5–8: each output row is a stored column. Columns are gathered in bands (one
    /// segment read per stored row per band) so disk reads stay large and memory stays bounded.
    private func emitTransposed(_ raster: Raster) throws(DownloadError) {
        let bandColumns = max(1, min(width, bandBudget / max(1, height * pixelBytes)))
        let band = UnsafeMutablePointer<UInt8>.allocate(capacity: bandColumns * height * pixelBytes)
        defer { band.deallocate() }
        var outputRow = 0
        while outputRow < width {
            let count = min(bandColumns, width - outputRow)
            // Stored columns of output rows outputRow ..< outputRow + count, as one range.
            let firstColumn = orientation.sourcePixel(x: 0, y: outputRow, width: width, height: height).x
            let lastColumn = orientation.sourcePixel(x: 0, y: outputRow + count - 1, width: width, height: height).x
            let lowColumn = min(firstColumn, lastColumn)
            for y in 0..<height {
                try raster.read(row: y, pixel: lowColumn, count: count, into: band + y * count * pixelBytes)
            }
            // Along an output row the stored column is fixed and the stored row moves by ±1.
            let rowStep = orientation.sourcePixel(x: 0, y: 0, width: width, height: height).y == 0 ? 1 : -1
            for outputY in outputRow..<(outputRow + count) {
                let start = orientation.sourcePixel(x: 0, y: outputY, width: width, height: height)
                var source = band + (start.y * count + start.x - lowColumn) * pixelBytes
                let stride = rowStep * count * pixelBytes
                for x in 0..<height {
                    (row + x * pixelBytes).update(from: source, count: pixelBytes)
                    source += stride
                }
                try next.consume(row)
            }
            outputRow += count
        }
    }
}
