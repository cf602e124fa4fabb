import CImageCodec
import CImageCodecFixtures
import XCTest
@testable import ImgFetchCore

/// TIFF through libtiff, strip by strip or tile by tile: exact against the written samples for the
/// native layouts, against libtiff's own tiff2rgba for the converted ones, every page verified,
/// and the hostile cases of docs/FAULTS.md.
final class TIFFCodecTests: CodecTestCase {
    private let none: Int32 = 1, lzw: Int32 = 5, deflate: Int32 = 8, packBits: Int32 = 32773, jpeg: Int32 = 7

    private func assertExact(_ fixture: TIFFFixture, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try fixture.encoded()
        for format in [PixelFormat.pam, .png] {
            let (converted, image) = try convertedImage(bytes, .tiff, to: format, file: file, line: line)
            XCTAssertSameImage(image, fixture.expected, file: file, line: line)
            XCTAssertTrue(converted.source.verified, label, file: file, line: line)
        }
    }

    func testNativeLayoutsAreExactInEveryStorage() throws {
        let layouts: [(samples: Int, bits: Int, photometric: Int32, extra: Int32)] = [
            (1, 1, 1, 0), (1, 2, 1, 0), (1, 4, 1, 0), (1, 8, 1, 0), (1, 16, 1, 0), (1, 8, 0, 0), (2, 8, 1, 2), (2, 16, 1, 2),
            (3, 8, 2, 0), (3, 16, 2, 0), (4, 8, 2, 2), (4, 16, 2, 2), (1, 4, 3, 0), (1, 8, 3, 0),
        ]
        for layout in layouts {
            for (compression, tiled, separate) in [(none, false, false), (lzw, false, true), (deflate, true, false), (packBits, false, false)] {
                if separate && layout.samples == 1 { continue }
                var fixture = TIFFFixture(width: 37, height: 21, samples: layout.samples, bits: layout.bits, photometric: layout.photometric,
                                          extraSamples: layout.extra)
                fixture.options.compression = compression
                fixture.options.planar_separate = separate ? 1 : 0
                fixture.options.rows_per_strip = 4
                if tiled { (fixture.options.tile_width, fixture.options.tile_height) = (16, 16) }
                try assertExact(fixture, "\(layout) compression \(compression) tiled \(tiled) separate \(separate)")
            }
        }
    }

    /// libtiff's own decode: tiff2rgba, read back by netpbm's tifftopnm (RGB).
    private func tiff2rgba(_ bytes: [UInt8]) throws -> Image {
        let rgba = try ReferenceDecoder.run("tiff2rgba", ["-c", "none", "{in}", "{out}"], input: bytes, name: "in.tif", directory: directory)
        return try ReferenceDecoder.image("tifftopnm", ["{in}"], input: rgba, name: "rgba.tif", directory: directory)
    }

    func testConvertedLayoutsMatchLibtiffsOwnDecode() throws {
        var ycbcr = TIFFFixture(width: 40, height: 24, samples: 3, bits: 8, photometric: 6)
        ycbcr.pixels = Fixtures.gradient(width: 40, height: 24, channels: 3)
        ycbcr.options.compression = jpeg
        ycbcr.options.rows_per_strip = 16
        var cmyk = TIFFFixture(width: 19, height: 7, samples: 4, bits: 8, photometric: 5)
        cmyk.options.compression = lzw
        var palette = TIFFFixture(width: 19, height: 7, samples: 1, bits: 8, photometric: 3)
        palette.options.compression = packBits
        var tiledRGB = TIFFFixture(width: 50, height: 30, samples: 3, bits: 8, photometric: 2)
        (tiledRGB.options.tile_width, tiledRGB.options.tile_height, tiledRGB.options.compression) = (16, 16, deflate)
        for fixture in [ycbcr, cmyk, palette, tiledRGB] {
            let bytes = try fixture.encoded()
            let (_, image) = try convertedImage(bytes, .tiff, to: .ppm)
            XCTAssertSameImage(image, try tiff2rgba(bytes))
        }
    }

    func testEveryPageIsVerifiedAndTheFirstIsWritten() throws {
        var fixture = TIFFFixture(width: 8, height: 8, samples: 3, bits: 8, photometric: 2)
        fixture.options.pages = 3
        fixture.options.compression = lzw
        var bytes = try fixture.encoded()
        let (_, image) = try convertedImage(bytes, .tiff, to: .pam)
        XCTAssertSameImage(image, fixture.expected)
        // Page 3's strip now claims to reach past the end of the file.
        XCTAssertEqual(imgcodec_test_tiff_patch(&bytes, bytes.count, 2, 279, 0, UInt32(bytes.count)), 0)
        let message = try verify(bytes, .tiff).error?.message ?? ""
        XCTAssertTrue(message.hasPrefix("invalid TIFF: ") && message.contains("extends past the end of the file"), message)
        XCTAssertNotNil(try convert(bytes, .tiff, to: .pam).0.error)
    }

    func testOrientationTagIsApplied() throws {
        var fixture = TIFFFixture(width: 7, height: 3, samples: 3, bits: 8, photometric: 2)
        fixture.options.orientation = 6
        let bytes = try fixture.encoded()
        XCTAssertEqual(try verify(bytes, .tiff).get().orientation, 6)
        XCTAssertSameImage(try convertedImage(bytes, .tiff, to: .pam).1, fixture.expected.oriented(6))
    }

    func testTruncationsFail() throws {
        var striped = TIFFFixture(width: 23, height: 17, samples: 3, bits: 8, photometric: 2)
        (striped.options.compression, striped.options.rows_per_strip) = (lzw, 5)
        try assertTruncationsFail(try striped.encoded(), .tiff, prefixes: ["invalid TIFF: "])
        var tiled = TIFFFixture(width: 40, height: 20, samples: 1, bits: 16, photometric: 1)
        (tiled.options.tile_width, tiled.options.tile_height, tiled.options.big_endian) = (16, 16, 1)
        try assertTruncationsFail(try tiled.encoded(), .tiff, prefixes: ["invalid TIFF: "])
        // A file cut in its pixel data says so: class truncated, as for the other formats.
        let bytes = try striped.encoded()
        guard case .failure(let error) = try verify(Array(bytes.prefix(bytes.count * 3 / 4)), .tiff) else {
            return XCTFail("a cut TIFF verified")
        }
        XCTAssertEqual(error.kind, .truncated, error.message)
    }

    func testLyingAndHostileFiles() throws {
        var base = TIFFFixture(width: 40, height: 30, samples: 3, bits: 8, photometric: 2)
        base.options.compression = lzw
        let valid = try base.encoded()
        func patched(_ tag: UInt16, _ value: UInt32, ifd: UInt32 = 0) -> [UInt8] {
            var bytes = valid
            XCTAssertEqual(imgcodec_test_tiff_patch(&bytes, bytes.count, ifd, tag, 0, value), 0)
            return bytes
        }
        XCTAssertEqual(try verify(patched(256, 0), .tiff).error?.message.hasPrefix("invalid TIFF: "), true)
        XCTAssertEqual(try verify(patched(257, 20000), .tiff, limits: DecodeLimits(maxPixels: 100_000)).error,
                       DownloadError(.tooLarge, "image too large: 40×20000 pixels exceeds --max-pixels (100000)"))
        XCTAssertEqual(try verify(patched(259, 34712), .tiff).error, DownloadError(.notAnImage, "unsupported: TIFF compression 34712"))
        let png = try PNGSample(.rgb, bitDepth: 8, width: 4, height: 4).encoded()
        XCTAssertEqual(try verify([0x49, 0x49, 0x2A, 0] + png, .tiff).error?.message.hasPrefix("invalid TIFF: "), true)
    }

    func testIFDLoopAndManyPagesAreRefused() throws {
        var two = TIFFFixture(width: 2, height: 2, samples: 1, bits: 8, photometric: 1)
        two.options.pages = 2
        var loop = try two.encoded()
        let first = imgcodec_test_tiff_ifd_offset(loop, loop.count, 0)
        XCTAssertEqual(imgcodec_test_tiff_patch(&loop, loop.count, 1, 0, 0, first), 0)
        XCTAssertTrue(try verify(loop, .tiff).error?.message.contains("looping") == true)

        var many = TIFFFixture(width: 1, height: 1, samples: 1, bits: 8, photometric: 1)
        many.options.pages = 10_001
        XCTAssertEqual(try verify(try many.encoded(), .tiff).error, DownloadError(.tooLarge, "image too large: more than 10000 frames"))
    }

    func testDeflateBombStreamsWithinTheLimits() throws {
        // 3000 × 3000 zeros in one deflate strip: a few KB that decode to 9 megapixels, read row by row.
        var options = imgcodec_test_tiff_options()
        (options.samples, options.bits, options.photometric, options.compression, options.rows_per_strip) = (1, 8, 1, deflate, 3000)
        let bytes = try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_tiff(nil, 3000, 3000, &options, data, size, message, messageSize)
        }
        XCTAssertLessThan(bytes.count, 100_000)
        XCTAssertEqual(try verify(bytes, .tiff).get().width, 3000)
        XCTAssertEqual(try verify(bytes, .tiff, limits: DecodeLimits(maxPixels: 1_000_000)).error?.kind, .tooLarge)
    }
}
