@testable import ImgFetchCore

/// The end of a test pipeline: keeps every row it is given.
final class CollectingSink: RowSink {
    let rowBytes: Int
    private(set) var pixels: [UInt8] = []
    private(set) var finished = false

    init(rowBytes: Int) {
        self.rowBytes = rowBytes
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        precondition(!finished)
        pixels += UnsafeBufferPointer(start: row, count: rowBytes)
    }

    func finish() throws(DownloadError) {
        finished = true
    }

    /// Feeds `image` row by row into `sink`, then finishes it.
    static func feed(_ image: Image, into sink: RowSink) throws {
        let rowBytes = image.width * image.pixelBytes
        try image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<image.height { try sink.consume(pixels.baseAddress! + y * rowBytes) }
        }
        try sink.finish()
    }
}
