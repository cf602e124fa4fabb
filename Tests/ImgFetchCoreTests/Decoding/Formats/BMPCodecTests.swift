import CImageCodec
import CImageCodecFixtures
import XCTest
@testable import ImgFetchCore

/// BMP through imgfetch's own bounded decoder: pixels against netpbm's bmptopnm where it reads the
/// layout, and against the encoder's input everywhere; the hostile cases of docs/FAULTS.md.
final class BMPCodecTests: CodecTestCase {
    private let rle8 = Int32(IMGCODEC_TEST_BMP_RLE8), rle4 = Int32(IMGCODEC_TEST_BMP_RLE4)
    private let bitfields = Int32(IMGCODEC_TEST_BMP_BITFIELDS)

    private func assertDecodes(_ fixture: BMPFixture, reference: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try fixture.encoded()
        if reference {
            let netpbm = try ReferenceDecoder.image("bmptopnm", ["{in}"], input: bytes, name: "in.bmp", directory: directory)
            XCTAssertSameImage(netpbm, fixture.expected.asRGB(), file: file, line: line)
        }
        for format in PixelFormat.lossless {
            let (converted, image) = try convertedImage(bytes, .bmp, to: format, file: file, line: line)
            XCTAssertSameImage(image, format == .ppm ? fixture.expected.asRGB() : fixture.expected, file: file, line: line)
            XCTAssertTrue(converted.source.verified, file: file, line: line)
        }
    }

    func testPaletteTrueColorAndRLEMatchBmptopnm() throws {
        for bits in [1, 4, 8, 24, 32] {
            for topDown in [false, true] {
                try assertDecodes(BMPFixture(width: 13, height: 7, bits: bits, topDown: topDown), reference: true)
            }
        }
        try assertDecodes(BMPFixture(width: 31, height: 9, bits: 8, compression: rle8), reference: true)
        try assertDecodes(BMPFixture(width: 31, height: 9, bits: 4, compression: rle4), reference: true)
        try assertDecodes(BMPFixture(width: 5, height: 3, bits: 24, header: 124), reference: true)
    }

    func testBitFieldsAlphaAndEveryHeaderVersion() throws {
        for header in [12, 40, 52, 56, 108, 124] {
            try assertDecodes(BMPFixture(width: 9, height: 4, bits: header == 12 ? 8 : 24, header: header), reference: false)
        }
        var rgb565 = BMPFixture(width: 11, height: 5, bits: 16, compression: bitfields)
        (rgb565.options.red_mask, rgb565.options.green_mask, rgb565.options.blue_mask) = (0xF800, 0x07E0, 0x001F)
        try assertDecodes(rgb565, reference: false)
        try assertDecodes(BMPFixture(width: 11, height: 5, bits: 16), reference: false)
        var bgra = BMPFixture(width: 11, height: 5, bits: 32, header: 124, compression: bitfields)
        (bgra.options.red_mask, bgra.options.green_mask, bgra.options.blue_mask, bgra.options.alpha_mask) = (0xFF0000, 0xFF00, 0xFF, 0xFF00_0000)
        XCTAssertTrue(bgra.hasAlpha)
        try assertDecodes(bgra, reference: false)
        var argb4444 = BMPFixture(width: 6, height: 6, bits: 16, header: 108, topDown: true, compression: bitfields)
        (argb4444.options.red_mask, argb4444.options.green_mask, argb4444.options.blue_mask, argb4444.options.alpha_mask) = (0x0F00, 0x00F0, 0x000F, 0xF000)
        try assertDecodes(argb4444, reference: false)
    }

    func testRLESkipsLeaveIndexZero() throws {
        for (bits, compression) in [(8, rle8), (4, rle4)] {
            var fixture = BMPFixture(width: 40, height: 12, bits: bits, compression: compression)
            fixture.options.rle_skips = 1
            try assertDecodes(fixture, reference: false)
        }
    }

    func testTruncationsFail() throws {
        // 4 pixels of 3 bytes: rows need no padding, so every cut loses pixels.
        try assertTruncationsFail(try BMPFixture(width: 4, height: 6, bits: 24).encoded(), .bmp, prefixes: ["invalid BMP: "])
        try assertTruncationsFail(try BMPFixture(width: 8, height: 5, bits: 8, topDown: true).encoded(), .bmp, prefixes: ["invalid BMP: "])
        // The end-of-bitmap code after the last row may be missing.
        try assertTruncationsFail(try BMPFixture(width: 31, height: 9, bits: 8, compression: rle8).encoded(), .bmp,
                                  prefixes: ["invalid BMP: "], optionalTail: 2)
    }

    func testLyingHeadersFailBeforeAnythingIsAllocated() throws {
        func lying(_ change: (inout imgcodec_test_bmp_options) -> Void) throws -> DownloadError? {
            var fixture = BMPFixture(width: 8, height: 8, bits: 24)
            change(&fixture.options)
            return try verify(try fixture.encoded(), .bmp).error
        }
        let tall = try lying { $0.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_HEIGHT); $0.height = 100_000 }
        XCTAssertTrue(tall?.message.hasPrefix("invalid BMP: truncated") == true, "\(String(describing: tall))")
        let header = try lying { $0.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_HEADER_SIZE); $0.header_size_field = 1000 }
        XCTAssertEqual(header, DownloadError(.notAnImage, "invalid BMP: info header of 1000 bytes"))
        let zero = try lying { $0.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_WIDTH); $0.width = 0 }
        XCTAssertEqual(zero, DownloadError(.notAnImage, "invalid BMP: zero-size image"))
        let offset = try lying { $0.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_DATA_OFFSET); $0.data_offset = 20 }
        XCTAssertTrue(offset?.message.contains("inside the headers") == true, "\(String(describing: offset))")
        let huge = try lying { $0.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_WIDTH); $0.width = Int32.max }
        XCTAssertEqual(huge?.kind, .tooLarge)
    }

    func testRLEBombWithinTheLimitsIsValidAndOverThemRefused() throws {
        // 4000 × 4000 of index 0, coded as end-of-line skips: a few KB that decode to 16 megapixels.
        var bomb = BMPFixture(width: 1, height: 1, bits: 8, compression: rle8)
        (bomb.width, bomb.height) = (4000, 4000)
        bomb.pixels = [UInt8](repeating: 0, count: 4000 * 4000)
        bomb.options.rle_skips = 1
        let bytes = try bomb.encoded()
        XCTAssertLessThan(bytes.count, 100_000)
        XCTAssertEqual(try verify(bytes, .bmp).get().width, 4000)
        XCTAssertEqual(try verify(bytes, .bmp, limits: DecodeLimits(maxPixels: 1_000_000)).error,
                       DownloadError(.tooLarge, "image too large: 4000×4000 pixels exceeds --max-pixels (1000000)"))
    }

    func testUnsupportedCompressionAndOtherFormatsBehindTheMagic() throws {
        var jpegInside = BMPFixture(width: 4, height: 4, bits: 24)
        jpegInside.options.overrides = UInt32(IMGCODEC_TEST_BMP_OVERRIDE_COMPRESSION)
        jpegInside.options.compression_field = 4
        XCTAssertEqual(try verify(try jpegInside.encoded(), .bmp).error, DownloadError(.notAnImage, "unsupported: BMP compression JPEG"))
        let png = try PNGSample(.rgb, bitDepth: 8, width: 4, height: 4).encoded()
        let message = try verify(Array("BM".utf8) + png, .bmp).error?.message ?? ""
        XCTAssertTrue(message.hasPrefix("invalid BMP: "), message)
    }
}
