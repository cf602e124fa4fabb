import CImageCodec

/// Writes rows as a baseline JPEG through libjpeg-turbo, one row at a time: gray or RGB, 8-bit.
/// Used for previews of opaque images, where a JPEG is a fraction of a PNG's size.
final class JPEGRowWriter: RowSink {
    private let handle: OpaquePointer

    /// Starts the file at once; rows arrive in `layout` (1 or 3 channels of 8 bits).
    init(width: Int, height: Int, layout: PixelLayout, quality: Int, fd: Int32) throws(DownloadError) {
        precondition(layout.bitDepth == 8 && (layout.channels == 1 || layout.channels == 3), "JPEG rows are gray or RGB, 8-bit")
        var writer: OpaquePointer?
        do {
            try CodecCall.run {
                imgcodec_jpeg_writer_open(fd, UInt32(width), UInt32(height), Int32(layout.channels), Int32(quality), &writer, $0, $1)
            }
        } catch {
            imgcodec_jpeg_writer_close(writer)
            throw error
        }
        handle = writer!
    }

    deinit {
        imgcodec_jpeg_writer_close(handle)
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        try CodecCall.run { imgcodec_jpeg_writer_write_row(handle, row, $0, $1) }
    }

    func finish() throws(DownloadError) {
        try CodecCall.run { imgcodec_jpeg_writer_finish(handle, $0, $1) }
    }
}
