import XCTest
@testable import ImgFetchCore

/// GIF through giflib, read record by record: pixels against giflib's own gif2rgb, every frame
/// verified, and the hostile cases of docs/FAULTS.md.
final class GIFCodecTests: CodecTestCase {
    /// gif2rgb's raw RGB of the whole screen (it fills with the background color, so only frames
    /// covering the screen without transparency compare).
    private func gif2rgb(_ bytes: [UInt8], width: Int, height: Int) throws -> Image {
        let raw = try ReferenceDecoder.run("gif2rgb", ["-1", "-o", "{out}", "{in}"], input: bytes, name: "in.gif", directory: directory)
        return Image(width: width, height: height, channels: 3, pixels: raw)
    }

    func testScreenCoveringFramesMatchGif2rgb() throws {
        for (width, height, colors, interlaced) in [(1, 1, 2, false), (37, 23, 2, false), (37, 23, 16, true), (64, 9, 256, false),
                                                    (5, 20, 256, true), (200, 150, 128, true)] {
            let fixture = GIFFixture.still(width: width, height: height, colors: colors, interlaced: interlaced)
            let bytes = try fixture.encoded()
            let reference = try gif2rgb(bytes, width: width, height: height)
            XCTAssertSameImage(reference, fixture.expected)
            for format in PixelFormat.lossless {
                let (converted, image) = try convertedImage(bytes, .gif, to: format)
                XCTAssertSameImage(image, reference)
                XCTAssertTrue(converted.source.verified)
            }
            XCTAssertEqual(try verify(bytes, .gif).get().width, width)
        }
    }

    func testLocalTablesTransparencyAndOffsetFramesComposeOntoATransparentScreen() throws {
        var fixture = GIFFixture.still(width: 30, height: 20, colors: 4)
        fixture.frames[0] = GIFFixture.Frame(left: 7, top: 3, width: 40, height: 9, indices: Fixtures.noise(count: 360, seed: 9).map { $0 % 8 },
                                             palette: Fixtures.noise(count: 24, seed: 5), transparentIndex: 2, interlaced: true)
        let (converted, image) = try convertedImage(try fixture.encoded(), .gif, to: .pam)
        XCTAssertEqual(converted.channels, 4)
        XCTAssertSameImage(image, fixture.expected)
        XCTAssertEqual(image.pixel(0, 0), [0, 0, 0, 0], "outside the frame is transparent")
    }

    func testAnimationsWriteTheFirstFrameAndVerifyEveryFrame() throws {
        var fixture = GIFFixture.still(width: 16, height: 8, colors: 16)
        for seed in 1...3 {
            fixture.frames.append(GIFFixture.Frame(left: seed, top: 1, width: 8, height: 4, indices: Fixtures.noise(count: 32, seed: UInt32(seed)).map { $0 % 16 }))
        }
        let bytes = try fixture.encoded()
        let (_, image) = try convertedImage(bytes, .gif, to: .pam)
        XCTAssertSameImage(image, fixture.expected)
        // Cut inside the last frame: the first frame is whole, but the file is not.
        let cut = Array(bytes.prefix(bytes.count - 6))
        XCTAssertEqual(try verify(cut, .gif).error?.message.hasPrefix("invalid GIF: truncated"), true)
        XCTAssertNotNil(try convert(cut, .gif, to: .pam).0.error, "conversion decodes every frame too")
    }

    func testTruncationsFail() throws {
        var fixture = GIFFixture.still(width: 23, height: 11, colors: 8, interlaced: true)
        fixture.frames.append(GIFFixture.Frame(width: 5, height: 5, indices: [UInt8](repeating: 1, count: 25), transparentIndex: 0))
        try assertTruncationsFail(try fixture.encoded(), .gif, prefixes: ["invalid GIF: "])
    }

    func testZeroSizeFrameIsInvalid() throws {
        var fixture = GIFFixture.still(width: 5, height: 5, colors: 2)
        fixture.frames.append(GIFFixture.Frame(width: 5, height: 1, indices: [1, 1, 1, 1, 1], declared: (5, 0)))
        XCTAssertEqual(try verify(try fixture.encoded(), .gif).error, DownloadError(.notAnImage, "invalid GIF: empty frame (frame 2 is 5×0)"))
    }

    func testLyingDescriptorAndDecompressionBombFail() throws {
        // The descriptor claims 12000 × 12000, the data holds 4 × 4: the LZW stream runs dry.
        var bomb = GIFFixture.still(width: 4, height: 4, colors: 2)
        bomb.screenWidth = 12000
        bomb.screenHeight = 12000
        bomb.frames[0].declared = (12000, 12000)
        let message = try verify(try bomb.encoded(), .gif).error?.message ?? ""
        XCTAssertTrue(message.hasPrefix("invalid GIF: LZW data ends before the last pixel"), message)
    }

    func testLimitsAreCheckedBeforeDecoding() throws {
        let fixture = GIFFixture.still(width: 100, height: 100)
        XCTAssertEqual(try verify(try fixture.encoded(), .gif, limits: DecodeLimits(maxPixels: 9999)).error,
                       DownloadError(.tooLarge, "image too large: 100×100 pixels exceeds --max-pixels (9999)"))
        // A frame bigger than the limit inside a small screen is refused too.
        var inner = GIFFixture.still(width: 10, height: 10)
        inner.frames.append(GIFFixture.Frame(width: 200, height: 100, indices: [UInt8](repeating: 0, count: 20000)))
        XCTAssertEqual(try verify(try inner.encoded(), .gif, limits: DecodeLimits(maxPixels: 9999)).error?.kind, .tooLarge)
    }

    func testManyFramesAreRefused() throws {
        var fixture = GIFFixture.still(width: 1, height: 1, colors: 2)
        fixture.repeatLastFrame = 99_999
        let bytes = try fixture.encoded()
        XCTAssertEqual(try verify(bytes, .gif).error, DownloadError(.tooLarge, "image too large: more than 10000 frames"))
        // Pixels over all frames: 4 × --max-pixels.
        var big = GIFFixture.still(width: 10, height: 10, colors: 2)
        big.repeatLastFrame = 20
        XCTAssertEqual(try verify(try big.encoded(), .gif, limits: DecodeLimits(maxPixels: 100)).error,
                       DownloadError(.tooLarge, "image too large: more than 400 pixels over 5 frames"))
    }

    func testAnotherFormatsBodyBehindTheMagicFails() throws {
        let png = try PNGSample(.rgb, bitDepth: 8, width: 4, height: 4).encoded()
        let message = try verify(Array("GIF89a".utf8) + png.dropFirst(8), .gif).error?.message ?? ""
        XCTAssertTrue(message.hasPrefix("invalid GIF: "), message)
    }
}
