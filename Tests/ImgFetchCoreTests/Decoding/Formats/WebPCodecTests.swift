import XCTest
@testable import ImgFetchCore

/// WebP through libwebp (WebPAnimDecoder for animations): pixels against libwebp's own dwebp,
/// every frame verified, and the hostile cases of docs/FAULTS.md.
final class WebPCodecTests: CodecTestCase {
    /// dwebp's RGBA PAM (it always writes alpha).
    private func dwebp(_ bytes: [UInt8]) throws -> Image {
        try ReferenceDecoder.image("dwebp", ["-quiet", "-pam", "{in}", "-o", "{out}"], input: bytes, name: "in.webp", directory: directory)
    }

    func testStillsMatchDwebp() throws {
        for (lossless, alpha) in [(false, false), (false, true), (true, false), (true, true)] {
            for (width, height) in [(1, 1), (37, 23), (160, 90)] {
                let pixels = Fixtures.gradient(width: width, height: height, channels: alpha ? 4 : 3)
                let bytes = try WebPFixture.still(pixels, width: width, height: height, lossless: lossless, alpha: alpha)
                var reference = try dwebp(bytes)
                if !alpha { reference = reference.asRGB() }
                for format in PixelFormat.lossless {
                    let (converted, image) = try convertedImage(bytes, .webp, to: format)
                    XCTAssertSameImage(image, format == .ppm ? reference.asRGB() : reference)
                    XCTAssertTrue(converted.source.verified)
                }
                if lossless {
                    // Lossless with exact RGB: the encoder's input comes back.
                    XCTAssertSameImage(try convertedImage(bytes, .webp, to: .pam).1,
                                       Image(width: width, height: height, channels: alpha ? 4 : 3, pixels: pixels))
                }
            }
        }
    }

    func testAnimationsWriteTheFirstFrameAndVerifyEveryFrame() throws {
        for lossless in [false, true] {
            let bytes = try WebPFixture.animation(width: 24, height: 16, frames: 4, lossless: lossless)
            let info = try verify(bytes, .webp).get()
            XCTAssertEqual(info.channels, 4)
            let first = try ReferenceDecoder.run("webpmux", ["-get", "frame", "1", "{in}", "-o", "{out}"], input: bytes, name: "anim.webp",
                                                 directory: directory)
            XCTAssertSameImage(try convertedImage(bytes, .webp, to: .pam).1, try dwebp(first))
        }
        // Three frames, the last one cut short: the first frame decodes, the file does not.
        let bytes = try WebPFixture.animation(width: 24, height: 16, frames: 3, lossless: true)
        var cut = Array(bytes.prefix(bytes.count - 10))
        let riffSize = UInt32(cut.count - 8)
        withUnsafeBytes(of: riffSize.littleEndian) { cut.replaceSubrange(4..<8, with: $0) }
        let message = try verify(cut, .webp).error?.message ?? ""
        XCTAssertTrue(message.hasPrefix("invalid WebP: "), message)
        XCTAssertNotNil(try convert(cut, .webp, to: .pam).0.error)
    }

    func testFakeAndTruncatedWebPFail() throws {
        let fake = Array("RIFF".utf8) + [100, 0, 0, 0] + Array("WEBP".utf8) + Fixtures.noise(count: 92)
        XCTAssertEqual(try verify(fake, .webp).error?.message.hasPrefix("invalid WebP: "), true)
        for (lossless, alpha) in [(false, false), (false, true), (true, true)] {
            let bytes = try WebPFixture.still(Fixtures.gradient(width: 40, height: 30, channels: alpha ? 4 : 3), width: 40, height: 30,
                                              lossless: lossless, alpha: alpha)
            try assertTruncationsFail(bytes, .webp, prefixes: ["invalid WebP: "])
        }
        try assertTruncationsFail(try WebPFixture.animation(width: 12, height: 8, frames: 3, lossless: false), .webp,
                                  prefixes: ["invalid WebP: "])
    }

    func testZeroSizeAndAnotherFormatBehindTheMagic() throws {
        var zero = try WebPFixture.still(Fixtures.gradient(width: 8, height: 8, channels: 3), width: 8, height: 8)
        zero[26] = 0
        zero[27] = 0
        XCTAssertEqual(try verify(zero, .webp).error?.message.hasPrefix("invalid WebP: image of 0×"), true)
        let png = try PNGSample(.rgb, bitDepth: 8, width: 4, height: 4).encoded()
        let other = Array("RIFF".utf8) + withUnsafeBytes(of: UInt32(png.count + 4).littleEndian, Array.init) + Array("WEBP".utf8) + png
        XCTAssertEqual(try verify(other, .webp).error, DownloadError(.notAnImage, "invalid WebP: no VP8, VP8L or VP8X chunk after the RIFF header"))
    }

    func testLimitsFramesAndBombs() throws {
        XCTAssertEqual(try verify(try WebPFixture.built(canvas: (1, 1), frame: (1, 1), count: 100_000), .webp).error,
                       DownloadError(.tooLarge, "image too large: 100000 frames exceed the limit (10000)"))
        XCTAssertEqual(try verify(try WebPFixture.built(canvas: (10, 10), frame: (10, 10), count: 5), .webp,
                                  limits: DecodeLimits(maxPixels: 100)).error,
                       DownloadError(.tooLarge, "image too large: 5 frames of 10×10 pixels exceed the animation limit (400 pixels)"))
        XCTAssertEqual(try verify(try WebPFixture.built(canvas: (4, 4), frame: (4, 4), count: 0), .webp).error,
                       DownloadError(.notAnImage, "invalid WebP: animation without frames"))
        // 34 bytes that decode to 16384 × 16384: refused from the header.
        XCTAssertEqual(try verify(try WebPFixture.solid(width: 16384, height: 16384), .webp).error,
                       DownloadError(.tooLarge, "image too large: 16384×16384 pixels exceeds --max-pixels (178956970)"))
        XCTAssertEqual(try verify(try WebPFixture.solid(width: 2000, height: 1000), .webp).get().width, 2000)
    }

    func testOrientationFromTheExifChunk() throws {
        let pixels = Fixtures.gradient(width: 6, height: 4, channels: 3)
        let bytes = try WebPFixture.still(pixels, width: 6, height: 4, lossless: true, orientation: 6)
        XCTAssertEqual(try verify(bytes, .webp).get().orientation, 6)
        XCTAssertSameImage(try convertedImage(bytes, .webp, to: .pam).1, Image(width: 6, height: 4, channels: 3, pixels: pixels).oriented(6))
    }
}
