import CImageCodec
import CImageCodecFixtures

/// A fixture BMP made by the codec's own test encoder (`imgcodec_test_encode_bmp`; no BMP library
/// is trusted), with the pixels a correct decoder must produce.
struct BMPFixture {
    var width: Int
    var height: Int
    var options = imgcodec_test_bmp_options()
    /// Indices (1...8 bits a pixel) or RGBA (16...32 bits), rows top first.
    var pixels: [UInt8]
    var palette: [UInt8] = []

    /// Noise in `bits` bits a pixel; palette images get a full palette.
    init(width: Int, height: Int, bits: Int, header: Int = 40, topDown: Bool = false, compression: Int32 = Int32(IMGCODEC_TEST_BMP_RGB),
         seed: UInt32 = 5) {
        self.width = width
        self.height = height
        options.bits_per_pixel = Int32(bits)
        options.header_size = Int32(header)
        options.top_down = topDown ? 1 : 0
        options.compression = compression
        if bits <= 8 {
            // RLE compresses runs: give it some.
            pixels = Fixtures.noise(count: width * height, seed: seed).enumerated().map { UInt8((Int($1) / (compression == 0 ? 1 : 64) + $0 / 7) % (1 << bits)) }
            palette = Fixtures.noise(count: 3 << bits, seed: seed + 1)
        } else {
            pixels = Fixtures.noise(count: width * height * 4, seed: seed)
        }
    }

    func encoded() throws -> [UInt8] {
        var options = options
        return try palette.withUnsafeBufferPointer { table in
            options.palette = table.baseAddress
            options.palette_entries = Int32(palette.count / 3)
            return try Fixtures.collect { data, size, message, messageSize in
                imgcodec_test_encode_bmp(pixels, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
            }
        }
    }

    /// The masks in effect: the given ones, or 5-5-5 / 8-8-8 by default.
    private var masks: [UInt32] {
        let given = [options.red_mask, options.green_mask, options.blue_mask, options.alpha_mask]
        if given != [0, 0, 0, 0] { return given }
        return options.bits_per_pixel == 16 ? [0x7C00, 0x03E0, 0x001F, 0] : [0xFF0000, 0xFF00, 0xFF, 0]
    }

    /// Whether the decoded image has alpha: an alpha mask, with bit fields.
    var hasAlpha: Bool {
        let bitfields = options.compression == Int32(IMGCODEC_TEST_BMP_BITFIELDS) || options.compression == Int32(IMGCODEC_TEST_BMP_ALPHABITFIELDS)
        return options.bits_per_pixel >= 16 && bitfields && masks[3] != 0
    }

    /// Each channel stored in its field as round(v × max / 255) and read back as round(s × 255 / max).
    var expected: Image {
        let channels = hasAlpha ? 4 : 3
        var samples = [Int]()
        for i in 0..<(width * height) {
            if options.bits_per_pixel <= 8 {
                let index = Int(pixels[i])
                samples += (0..<3).map { 3 * index + $0 < palette.count ? Int(palette[3 * index + $0]) : 0 }
            } else {
                for c in 0..<channels {
                    let mask = masks[c]
                    let max = mask == 0 ? 0 : Int(mask >> UInt32(mask.trailingZeroBitCount))
                    let value = Int(pixels[4 * i + c])
                    let stored = max == 0 ? 0 : (value * max * 2 + 255) / 510
                    samples.append(max == 0 ? 0 : (stored * 255 * 2 + max) / (2 * max))
                }
            }
        }
        return Image(width: width, height: height, channels: channels, bitDepth: 8, samples: samples)
    }
}
