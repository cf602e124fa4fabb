import CImageCodec
import CImageCodecFixtures

/// A fixture TIFF written by libtiff itself (`imgcodec_test_encode_tiff`), with the pixels a correct
/// decoder must produce for the layouts the codec reads natively.
struct TIFFFixture {
    var width: Int
    var height: Int
    var options = imgcodec_test_tiff_options()
    /// Interleaved rows, packed MSB first below 8 bits; 16-bit samples native-endian.
    var pixels: [UInt8]
    var colormap: [UInt16] = []

    var bits: Int { Int(options.bits == 0 ? 8 : options.bits) }
    var samples: Int { Int(options.samples == 0 ? 1 : options.samples) }
    var rowBytes: Int { (width * samples * bits + 7) / 8 }

    init(width: Int, height: Int, samples: Int, bits: Int, photometric: Int32, extraSamples: Int32 = 0, seed: UInt32 = 11) {
        self.width = width
        self.height = height
        options.samples = Int32(samples)
        options.bits = Int32(bits)
        options.photometric = photometric
        options.extra_samples = extraSamples
        pixels = Fixtures.noise(count: (width * samples * bits + 7) / 8 * height, seed: seed)
        if photometric == 3 {
            colormap = Fixtures.noise(count: 6 << bits, seed: seed + 1).enumerated().compactMap { $0.offset % 2 == 0 ? UInt16($0.element) << 8 | 0x80 : nil }
        }
    }

    func encoded() throws -> [UInt8] {
        var options = options
        return try colormap.withUnsafeBufferPointer { map in
            options.colormap = colormap.isEmpty ? nil : map.baseAddress
            return try Fixtures.collect { data, size, message, messageSize in
                imgcodec_test_encode_tiff(pixels, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
            }
        }
    }

    /// Raw sample `index` of row `y`.
    func sample(_ y: Int, _ index: Int) -> Int {
        let row = y * rowBytes
        switch bits {
        case 16: return pixels.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: row + 2 * index, as: UInt16.self)) }
        case 8: return Int(pixels[row + index])
        default:
            let bit = index * bits
            return (Int(pixels[row + bit / 8]) >> (8 - bits - bit % 8)) & ((1 << bits) - 1)
        }
    }

    /// Gray (min-is-black or min-is-white), gray + alpha, RGB(A) or palette with unassociated (or
    /// no) alpha: samples below 8 bits scaled to 8, 16-bit kept, min-is-white inverted, palettes to RGB.
    var expected: Image {
        let photometric = options.photometric
        let depth = bits == 16 ? 16 : 8
        let max = (1 << bits) - 1
        func scaled(_ value: Int) -> Int { bits < 8 ? (value * 255 + max / 2) / max : value }
        var out = [Int]()
        for y in 0..<height {
            for x in 0..<width {
                let raw = (0..<samples).map { sample(y, x * samples + $0) }
                switch photometric {
                case 3:
                    let entries = 1 << bits
                    // 16-bit colormap entries become 8 bits by their high byte (tiff2rgba's rule).
                    out += (0..<3).map { Int(colormap[$0 * entries + raw[0]] >> 8) }
                    out += raw.dropFirst().map(scaled)
                case 0:
                    out.append(scaled(max - raw[0]))
                    out += raw.dropFirst().map(scaled)
                default:
                    out += raw.map(scaled)
                }
            }
        }
        let channels = photometric == 3 ? 3 + samples - 1 : samples
        return Image(width: width, height: height, channels: channels, bitDepth: photometric == 3 ? 8 : depth, samples: out)
    }
}
