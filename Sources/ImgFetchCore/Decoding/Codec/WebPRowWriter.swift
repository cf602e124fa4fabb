import CImageCodec

/// Writes rows as a lossy WebP through libwebp. libwebp encodes a whole picture, so the rows are
/// gathered first (8-bit RGB, or RGBA when the source has alpha; gray is widened to RGB) and
/// encoded by `finish`: the conversion counts that buffer in its held memory.
final class WebPRowWriter: RowSink {
    /// WebP's largest side.
    static let maxDimension = 16383

    private let width: Int
    private let height: Int
    private let sourceChannels: Int
    /// 3 or 4: what libwebp is given.
    private let channels: Int
    private let quality: Int
    private let fd: Int32
    private let pixels: UnsafeMutablePointer<UInt8>
    private var rows = 0

    /// Rows arrive in `layout` (1 to 4 channels of 8 bits).
    init(width: Int, height: Int, layout: PixelLayout, quality: Int, fd: Int32) throws(DownloadError) {
        precondition(layout.bitDepth == 8, "WebP rows are 8-bit")
        guard width <= Self.maxDimension && height <= Self.maxDimension else {
            throw DownloadError(.tooLarge, "WebP holds at most \(Self.maxDimension)×\(Self.maxDimension) pixels; "
                + "this image would be \(width)×\(height) (--resize makes it smaller)")
        }
        self.width = width
        self.height = height
        sourceChannels = layout.channels
        channels = layout.hasAlpha ? 4 : 3
        self.quality = quality
        self.fd = fd
        pixels = .allocate(capacity: max(1, width * height * channels))
    }

    deinit {
        pixels.deallocate()
    }

    /// Bytes a writer of `width` × `height` holds: its pixels, and libwebp's YUV copy and encoder state.
    static func heldMemory(width: Int, height: Int) -> Int { width * height * 6 }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        precondition(rows < height, "more rows than the height")
        let out = pixels + rows * width * channels
        switch sourceChannels {
        case 1, 2:
            for x in 0..<width {
                let gray = row[x * sourceChannels]
                out[x * channels] = gray
                out[x * channels + 1] = gray
                out[x * channels + 2] = gray
                if sourceChannels == 2 { out[x * channels + 3] = row[x * 2 + 1] }
            }
        default:
            out.update(from: row, count: width * channels)
        }
        rows += 1
    }

    func finish() throws(DownloadError) {
        guard rows == height else { throw DownloadError(.filesystem, "cannot encode WebP: \(rows) of \(height) rows written") }
        try CodecCall.run { imgcodec_webp_write(fd, pixels, UInt32(width), UInt32(height), Int32(channels), Int32(quality), $0, $1) }
    }
}
