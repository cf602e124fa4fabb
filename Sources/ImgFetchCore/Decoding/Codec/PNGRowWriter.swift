import CImageCodec

/// Writes rows as a non-interlaced PNG through libpng, one row at a time: gray, gray + alpha, RGB
/// or RGBA at 8 or 16 bits, as the rows come.
final class PNGRowWriter: RowSink {
    private let handle: OpaquePointer

    /// Writes the signature and IHDR at once; rows arrive in `layout`. `prefersSpeed` compresses
    /// faster into a larger file (previews).
    init(width: Int, height: Int, layout: PixelLayout, fd: Int32, prefersSpeed: Bool = false) throws(DownloadError) {
        var writer: OpaquePointer?
        do {
            try CodecCall.run {
                imgcodec_png_writer_open(fd, UInt32(width), UInt32(height), Int32(layout.channels), Int32(layout.bitDepth),
                                         &writer, $0, $1)
            }
        } catch {
            imgcodec_png_writer_close(writer)
            throw error
        }
        handle = writer!
        if prefersSpeed { imgcodec_png_writer_prefer_speed(handle) }
    }

    deinit {
        imgcodec_png_writer_close(handle)
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        try CodecCall.run { imgcodec_png_writer_write_row(handle, row, $0, $1) }
    }

    func finish() throws(DownloadError) {
        try CodecCall.run { imgcodec_png_writer_finish(handle, $0, $1) }
    }
}
