import CImageCodec

/// Writes rows as a non-interlaced 8-bit RGB or RGBA PNG through libpng, one row at a time.
final class PNGRowWriter: RowSink {
    private let handle: OpaquePointer

    /// Writes the signature and IHDR at once; rows arrive with `channels` (3 or 4) bytes per pixel.
    init(width: Int, height: Int, channels: Int, fd: Int32) throws(DownloadError) {
        var writer: OpaquePointer?
        do {
            try CodecCall.run { imgcodec_png_writer_open(fd, UInt32(width), UInt32(height), Int32(channels), &writer, $0, $1) }
        } catch {
            imgcodec_png_writer_close(writer)
            throw error
        }
        handle = writer!
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
