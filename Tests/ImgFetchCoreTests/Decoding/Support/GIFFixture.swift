import CImageCodec
import CImageCodecFixtures

/// A fixture GIF described in Swift, encoded by giflib's own encoder (`imgcodec_test_encode_gif`),
/// with the pixels a correct decoder must produce computed here from the GIF specification.
struct GIFFixture {
    struct Frame {
        var left = 0, top = 0, width: Int, height: Int
        /// width × height indices, rows in display order.
        var indices: [UInt8]
        /// A local color table (RGB triples), or nil for the global one.
        var palette: [UInt8]? = nil
        var transparentIndex: Int? = nil
        var interlaced = false
        /// What the descriptor claims instead of width × height (the lying cases).
        var declared: (width: Int, height: Int)? = nil
    }

    var screenWidth: Int
    var screenHeight: Int
    var palette: [UInt8]?
    var frames: [Frame]
    var repeatLastFrame = 0
    var removeGlobalPalette = false

    /// A screen-covering frame of noise over a palette of `colors` entries.
    static func still(width: Int, height: Int, colors: Int = 256, interlaced: Bool = false, seed: UInt32 = 3) -> GIFFixture {
        let indices = Fixtures.noise(count: width * height, seed: seed).map { UInt8(Int($0) % colors) }
        var frame = Frame(width: width, height: height, indices: indices)
        frame.interlaced = interlaced
        return GIFFixture(screenWidth: width, screenHeight: height, palette: Fixtures.noise(count: 3 * colors, seed: seed + 1),
                          frames: [frame])
    }

    func encoded() throws -> [UInt8] {
        // The C structs point into buffers that must outlive the call: keep them all alive here.
        var buffers: [UnsafeMutableBufferPointer<UInt8>] = []
        defer { buffers.forEach { $0.deallocate() } }
        func copy(_ bytes: [UInt8]?) -> UnsafePointer<UInt8>? {
            guard let bytes else { return nil }
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, bytes.count))
            _ = buffer.initialize(from: bytes)
            buffers.append(buffer)
            return UnsafePointer(buffer.baseAddress)
        }
        var cFrames = frames.map { frame -> imgcodec_test_gif_frame in
            var c = imgcodec_test_gif_frame()
            c.indices = copy(frame.indices)
            (c.left, c.top, c.width, c.height) = (UInt32(frame.left), UInt32(frame.top), UInt32(frame.width), UInt32(frame.height))
            c.palette = copy(frame.palette)
            c.palette_entries = Int32((frame.palette?.count ?? 0) / 3)
            c.has_transparent = frame.transparentIndex == nil ? 0 : 1
            c.transparent_index = Int32(frame.transparentIndex ?? 0)
            c.interlaced = frame.interlaced ? 1 : 0
            if let declared = frame.declared {
                c.declare_size = 1
                (c.declared_width, c.declared_height) = (UInt32(declared.width), UInt32(declared.height))
            }
            return c
        }
        var options = imgcodec_test_gif_options()
        (options.screen_width, options.screen_height) = (UInt32(screenWidth), UInt32(screenHeight))
        options.palette = copy(palette)
        options.palette_entries = Int32((palette?.count ?? 0) / 3)
        options.remove_global_palette = removeGlobalPalette ? 1 : 0
        options.repeat_last_frame = UInt32(repeatLastFrame)
        return try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_gif(&options, &cFrames, UInt32(cFrames.count), data, size, message, messageSize)
        }
    }

    /// The first frame on a transparent screen: RGB when it covers the screen without a transparent
    /// index, else RGBA with uncovered and transparent pixels (0, 0, 0, 0).
    var expected: Image {
        let frame = frames[0]
        let covers = frame.left == 0 && frame.top == 0 && frame.width >= screenWidth && frame.height >= screenHeight
        let channels = covers && frame.transparentIndex == nil ? 3 : 4
        var samples = [Int](repeating: 0, count: screenWidth * screenHeight * channels)
        let table = frame.palette ?? palette ?? []
        for y in 0..<frame.height where frame.top + y < screenHeight {
            for x in 0..<frame.width where frame.left + x < screenWidth {
                let index = Int(frame.indices[y * frame.width + x])
                if index == frame.transparentIndex { continue }
                let o = ((frame.top + y) * screenWidth + frame.left + x) * channels
                let color = 3 * index + 2 < table.count ? Array(table[(3 * index)..<(3 * index + 3)]).map(Int.init) : [0, 0, 0]
                for c in 0..<3 { samples[o + c] = color[c] }
                if channels == 4 { samples[o + 3] = 255 }
            }
        }
        return Image(width: screenWidth, height: screenHeight, channels: channels, bitDepth: 8, samples: samples)
    }
}
