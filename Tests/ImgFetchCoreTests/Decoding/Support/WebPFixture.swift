import CImageCodec
import CImageCodecFixtures

/// Fixture WebPs made by libwebp's own encoders (`imgcodec_test_encode_webp*`) and by the codec's
/// hand-built chunk writers for the hostile shapes libwebp will not encode.
enum WebPFixture {
    static func still(_ pixels: [UInt8], width: Int, height: Int, lossless: Bool = false, alpha: Bool = false,
                      orientation: Int = 0) throws -> [UInt8] {
        var options = imgcodec_test_webp_options()
        options.lossless = lossless ? 1 : 0
        options.quality = 80
        options.alpha = alpha ? 1 : 0
        options.exact = 1
        options.orientation = Int32(orientation)
        return try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_webp(pixels, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
        }
    }

    /// WebPAnimEncoder over `frames` frames of RGBA noise.
    static func animation(width: Int, height: Int, frames: Int, lossless: Bool) throws -> [UInt8] {
        var options = imgcodec_test_webp_options()
        options.lossless = lossless ? 1 : 0
        options.quality = 80
        options.alpha = 1
        options.exact = 1
        let pixels = Fixtures.noise(count: width * height * 4 * frames, seed: 21)
        return try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_webp_animation(pixels, UInt32(width), UInt32(height), UInt32(frames), &options, data, size,
                                                message, messageSize)
        }
    }

    /// A hand-built animation of `count` identical frames (nothing checks it: hostile shapes welcome).
    static func built(canvas: (Int, Int), frame: (Int, Int), count: Int, argb: UInt32 = 0xFF33_6699) throws -> [UInt8] {
        var layout = imgcodec_test_webp_animation_layout()
        (layout.canvas_width, layout.canvas_height) = (UInt32(canvas.0), UInt32(canvas.1))
        (layout.frame_width, layout.frame_height) = (UInt32(frame.0), UInt32(frame.1))
        layout.frame_count = UInt32(count)
        layout.argb = argb
        return try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_build_webp_animation(&layout, data, size, message, messageSize)
        }
    }

    /// A 34-byte lossless image of one color: a decompression bomb at large sizes.
    static func solid(width: Int, height: Int, argb: UInt32 = 0xFF00_0000) throws -> [UInt8] {
        try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_build_webp_solid(UInt32(width), UInt32(height), argb, data, size, message, messageSize)
        }
    }
}
