import CImageCodec
@testable import ImgFetchCore

/// A fixture PNG described by its raw samples, with the pixels a correct decoder must produce
/// computed here from the PNG specification, independently of libpng.
struct PNGSample {
    enum ColorType: Int32 {
        case gray = 0, rgb = 2, palette = 3, grayAlpha = 4, rgba = 6

        var samplesPerPixel: Int {
            switch self {
            case .gray, .palette: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }
    }

    var colorType: ColorType
    var bitDepth: Int
    var width: Int
    var height: Int
    var interlaced = false
    /// Packed rows as stored (16-bit samples big-endian, sub-byte samples MSB first).
    var rows: [UInt8]
    var palette: [UInt8] = []
    var paletteAlpha: [UInt8] = []
    /// tRNS for gray (one value) or RGB (three values), at the stored bit depth.
    var transparent: [Int]? = nil

    var rowBytes: Int { (width * colorType.samplesPerPixel * bitDepth + 7) / 8 }

    /// Random samples of every kind; palette images get a full palette and, optionally, a partial tRNS.
    init(_ colorType: ColorType, bitDepth: Int, width: Int, height: Int, seed: UInt32 = 7) {
        self.colorType = colorType
        self.bitDepth = bitDepth
        self.width = width
        self.height = height
        rows = []
        rows = Fixtures.noise(count: rowBytes * height, seed: seed)
        if colorType == .palette {
            palette = Fixtures.noise(count: 3 << bitDepth, seed: seed + 1)
        }
    }

    /// The raw sample `index` (0-based, across the row) of row `y`.
    func sample(_ y: Int, _ index: Int) -> Int {
        let row = y * rowBytes
        switch bitDepth {
        case 16: return Int(rows[row + 2 * index]) << 8 | Int(rows[row + 2 * index + 1])
        case 8: return Int(rows[row + index])
        default:
            let bit = index * bitDepth
            let byte = Int(rows[row + bit / 8])
            return (byte >> (8 - bitDepth - bit % 8)) & ((1 << bitDepth) - 1)
        }
    }

    var hasAlpha: Bool {
        colorType == .grayAlpha || colorType == .rgba || !paletteAlpha.isEmpty || transparent != nil
    }

    /// The pixels a decoder must produce: the stored channels (palettes as RGB, tRNS as an alpha
    /// channel) at 8 bits, or 16 bits for 16-bit files; sub-byte gray scaled up to 8 bits.
    var expected: Image {
        let color = colorType == .rgb || colorType == .rgba || colorType == .palette
        let channels = (color ? 3 : 1) + (hasAlpha ? 1 : 0)
        let depth = bitDepth == 16 ? 16 : 8
        let opaque = (1 << depth) - 1
        func scaled(_ value: Int) -> Int { bitDepth < 8 ? value * 255 / ((1 << bitDepth) - 1) : value }
        var samples = [Int]()
        samples.reserveCapacity(width * height * channels)
        let n = colorType.samplesPerPixel
        var raw = [Int](repeating: 0, count: n)
        for y in 0..<height {
            for x in 0..<width {
                for i in 0..<n { raw[i] = sample(y, x * n + i) }
                var pixel: [Int]
                switch colorType {
                case .palette:
                    let i = raw[0]
                    pixel = [Int(palette[3 * i]), Int(palette[3 * i + 1]), Int(palette[3 * i + 2])]
                    if hasAlpha { pixel.append(i < paletteAlpha.count ? Int(paletteAlpha[i]) : 255) }
                default:
                    pixel = raw.map(scaled)
                    if let transparent { pixel.append(Array(raw.prefix(transparent.count)) == transparent ? 0 : opaque) }
                }
                samples += pixel
            }
        }
        return Image(width: width, height: height, channels: channels, bitDepth: depth, samples: samples)
    }

    /// The stored channel count ImageInfo reports.
    var infoChannels: Int {
        switch colorType {
        case .palette: paletteAlpha.isEmpty ? 3 : 4
        case .gray: transparent == nil ? 1 : 2
        case .rgb: transparent == nil ? 3 : 4
        case .grayAlpha: 2
        case .rgba: 4
        }
    }

    func encoded(textChunks: Int = 0, orientation: Int = 0, apng: Bool = false) throws -> [UInt8] {
        var options = Fixtures.pngOptions(colorType: colorType.rawValue, bitDepth: Int32(bitDepth), interlaced: interlaced)
        options.text_chunks = Int32(textChunks)
        options.orientation = Int32(orientation)
        options.apng = apng ? 1 : 0
        if let transparent {
            options.transparent_color = 1
            if transparent.count == 1 {
                options.transparent_gray = UInt16(transparent[0])
            } else {
                (options.transparent_red, options.transparent_green, options.transparent_blue) =
                    (UInt16(transparent[0]), UInt16(transparent[1]), UInt16(transparent[2]))
            }
        }
        return try palette.withUnsafeBufferPointer { palettePointer in
            try paletteAlpha.withUnsafeBufferPointer { alphaPointer in
                options.palette = palettePointer.baseAddress
                options.palette_entries = Int32(palette.count / 3)
                options.palette_alpha = alphaPointer.baseAddress
                options.palette_alpha_entries = Int32(paletteAlpha.count)
                return try Fixtures.png(rows, width: width, height: height, options: options)
            }
        }
    }
}
