import CImageCodec
import CImageCodecFixtures

/// Fixture AVIFs made by libavif's own encoder (aom; `imgcodec_test_encode_avif`), including the
/// lying and oversized shapes the decoder must refuse.
struct AVIFFixture {
    var width: Int
    var height: Int
    var options = imgcodec_test_avif_options()
    /// Rows packed without padding: bytes at 8 bits, native-endian UInt16 at 10 and 12.
    var pixels: [UInt8]

    init(width: Int, height: Int, channels: Int, bitDepth: Int = 8, yuv: Int32 = Int32(IMGCODEC_TEST_AVIF_YUV444), lossless: Bool = true) {
        self.width = width
        self.height = height
        options.channels = Int32(channels)
        options.bit_depth = Int32(bitDepth)
        options.yuv_format = yuv
        options.lossless = lossless ? 1 : 0
        if bitDepth == 8 {
            pixels = Fixtures.gradient(width: width, height: height, channels: channels)
        } else {
            // The 8-bit gradient widened, with the low bits varied so that they matter.
            let gradient = Fixtures.gradient(width: width, height: height, channels: channels)
            var samples = [Int](repeating: 0, count: gradient.count)
            for i in gradient.indices { samples[i] = Int(gradient[i]) << (bitDepth - 8) | i % (1 << (bitDepth - 8)) }
            pixels = Image(width: width, height: height, channels: channels, bitDepth: 16, samples: samples).pixels
        }
    }

    func encoded() throws -> [UInt8] {
        var options = options
        return try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_avif(pixels, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
        }
    }

    static func sharedGrid(columns: Int, rows: Int, cell: Int) throws -> [UInt8] {
        try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_avif_shared_grid(UInt32(columns), UInt32(rows), UInt32(cell), UInt32(cell), data, size, message, messageSize)
        }
    }
}
