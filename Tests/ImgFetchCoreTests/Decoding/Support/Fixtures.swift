import CImageCodec
import CImageCodecFixtures
import XCTest

/// Test images generated through CImageCodec's fixture encoders, so no binary fixtures are checked in.
enum Fixtures {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A JPEG of `pixels` (RGB, gray or CMYK rows per `options.color_space`).
    static func jpeg(_ pixels: [UInt8], width: Int, height: Int,
                     options: imgcodec_test_jpeg_options = jpegOptions()) throws -> [UInt8] {
        var options = options
        return try collect { data, size, message, messageSize in
            imgcodec_test_encode_jpeg(pixels, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
        }
    }

    /// Options with quality 90 and everything else off; adjust fields as needed.
    static func jpegOptions(quality: Int32 = 90, progressive: Bool = false, arithmetic: Bool = false,
                            colorSpace: Int32 = Int32(IMGCODEC_TEST_JPEG_RGB), orientation: Int32 = 0) -> imgcodec_test_jpeg_options {
        var options = imgcodec_test_jpeg_options()
        options.quality = quality
        options.progressive = progressive ? 1 : 0
        options.arithmetic = arithmetic ? 1 : 0
        options.color_space = colorSpace
        options.orientation = orientation
        return options
    }

    /// A PNG of `rows` in PNG's packed layout.
    static func png(_ rows: [UInt8], width: Int, height: Int, options: imgcodec_test_png_options) throws -> [UInt8] {
        var options = options
        return try collect { data, size, message, messageSize in
            imgcodec_test_encode_png(rows, UInt32(width), UInt32(height), &options, data, size, message, messageSize)
        }
    }

    static func pngOptions(colorType: Int32, bitDepth: Int32, interlaced: Bool = false) -> imgcodec_test_png_options {
        var options = imgcodec_test_png_options()
        options.color_type = colorType
        options.bit_depth = bitDepth
        options.interlaced = interlaced ? 1 : 0
        return options
    }

    /// libjpeg's own decode: RGB, or raw CMYK (components 4) for CMYK and YCCK files.
    static func referenceDecode(_ jpeg: [UInt8], scaleNumerator: Int = 8) throws -> Image {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0, height: UInt32 = 0
        var components: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = imgcodec_test_decode_jpeg(jpeg, jpeg.count, Int32(scaleNumerator), &pixels, &width, &height,
                                               &components, &message, message.count)
        guard status == 0, let pixels else { throw Failure(description: cString(message)) }
        defer { imgcodec_free(pixels) }
        let count = Int(width) * Int(height) * Int(components)
        return Image(width: Int(width), height: Int(height), channels: Int(components),
                     pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    /// Streams a width × height pattern JPEG to `path` without holding its pixels.
    static func writePatternJPEG(to path: String, width: Int, height: Int, quality: Int32 = 85, orientation: Int32 = 0) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path)") }
        defer { close(fd) }
        var message = [CChar](repeating: 0, count: 256)
        let status = imgcodec_test_write_pattern_jpeg(fd, UInt32(width), UInt32(height), quality, orientation, &message, message.count)
        guard status == 0 else { throw Failure(description: cString(message)) }
    }

    /// Runs `encode` with the fixture encoders' out-parameters and returns the bytes it made.
    static func collect(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>,
                                           UnsafeMutablePointer<CChar>, Int) -> Int32) throws -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = message.withUnsafeMutableBufferPointer { encode(&data, &size, $0.baseAddress!, $0.count) }
        guard status == 0, let data else { throw Failure(description: cString(message)) }
        defer { imgcodec_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// The text in a NUL-terminated message buffer.
    static func cString(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Pixels

    /// Deterministic pseudo-random bytes: every sample value and neighbour combination shows up.
    static func noise(count: Int, seed: UInt32 = 1) -> [UInt8] {
        var state = seed &* 2_654_435_761 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state >> 11)
        }
    }

    /// Smooth gradients with a few edges: what JPEG encodes well, so decode differences stay meaningful.
    static func gradient(width: Int, height: Int, channels: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    let value = (x * 255 / max(1, width - 1) * (c + 1) + y * 255 / max(1, height - 1) * (3 - c % 3)) / 4
                    pixels[(y * width + x) * channels + c] = UInt8(truncatingIfNeeded: value + ((x / 8 + y / 8) % 2) * 40)
                }
            }
        }
        return pixels
    }
}
