import CImageCodec
import CImageCodecFixtures
import XCTest
@testable import ImgFetchCore

/// AVIF through libavif and dav1d: pixels against libavif's own avifdec, 10- and 12-bit kept as
/// 16-bit, every frame of a sequence verified, and the hostile cases of docs/FAULTS.md.
final class AVIFCodecTests: CodecTestCase {
    private let yuv420 = Int32(IMGCODEC_TEST_AVIF_YUV420), yuv400 = Int32(IMGCODEC_TEST_AVIF_YUV400)

    /// avifdec's decode (best chroma upsampling, as the codec does) read back through pngtopam.
    private func avifdec(_ bytes: [UInt8], depth: Int, alpha: Bool) throws -> Image {
        try ReferenceDecoder.image("avifdec", ["-u", "best", "--depth", String(depth), "{in}", "{out}.png"], input: bytes, name: "in.avif",
                                   directory: directory, convert: alpha ? ["pngtopam", "-alphapam"] : ["pngtopam"], outputSuffix: ".png")
    }

    func testEveryLayoutMatchesAvifdec() throws {
        for (channels, depth, yuv, lossless) in [(3, 8, Int32(0), true), (4, 8, Int32(0), true), (3, 8, yuv420, false), (4, 10, yuv420, false),
                                                 (3, 12, Int32(0), true), (2, 10, yuv400, true)] {
            let fixture = AVIFFixture(width: 33, height: 17, channels: channels, bitDepth: depth, yuv: yuv, lossless: lossless)
            let bytes = try fixture.encoded()
            var reference = try avifdec(bytes, depth: depth == 8 ? 8 : 16, alpha: channels % 2 == 0)
            if channels <= 2 { reference = reference.grayFromRGB() }
            let (converted, image) = try convertedImage(bytes, .avif, to: .pam)
            XCTAssertSameImage(image, reference)
            XCTAssertEqual(converted.bitDepth, depth == 8 ? 8 : 16)
            XCTAssertEqual(try verify(bytes, .avif).get().bitDepth, depth)
            if lossless && depth == 8 && yuv == 0 {
                XCTAssertSameImage(image, Image(width: 33, height: 17, channels: channels, pixels: fixture.pixels))
            }
        }
    }

    func testSequencesWriteTheFirstFrameAndVerifyEveryFrame() throws {
        var fixture = AVIFFixture(width: 24, height: 16, channels: 3)
        fixture.options.frames = 3
        fixture.options.same_pixels = 1
        let bytes = try fixture.encoded()
        XCTAssertSameImage(try convertedImage(bytes, .avif, to: .pam).1, Image(width: 24, height: 16, channels: 3, pixels: fixture.pixels))
        try assertTruncationsFail(bytes, .avif, prefixes: ["invalid AVIF: "])
    }

    func testTruncatedStillsFail() throws {
        try assertTruncationsFail(try AVIFFixture(width: 40, height: 24, channels: 4, yuv: yuv420, lossless: false).encoded(), .avif,
                                  prefixes: ["invalid AVIF: "])
    }

    func testLimitsFramesAndBombs() throws {
        var many = AVIFFixture(width: 8, height: 8, channels: 3)
        many.options.claimed_frames = 100_000
        XCTAssertEqual(try verify(try many.encoded(), .avif).error, DownloadError(.tooLarge, "image too large: more than 10000 frames"))
        // A 64 × 48 frame declared 12000 × 12000: refused from the header.
        var lying = AVIFFixture(width: 64, height: 48, channels: 3)
        (lying.options.declared_width, lying.options.declared_height) = (12000, 12000)
        XCTAssertEqual(try verify(try lying.encoded(), .avif, limits: DecodeLimits(maxPixels: 100_000_000)).error,
                       DownloadError(.tooLarge, "image too large: 12000×12000 pixels exceeds --max-pixels (100000000)"))
        // The image spatial extents (ispe) rewritten to 0 × 0.
        var zero = try AVIFFixture(width: 16, height: 16, channels: 3).encoded()
        let ispe = try XCTUnwrap((0..<(zero.count - 16)).first { Array(zero[$0..<$0 + 4]) == Array("ispe".utf8) })
        zero.replaceSubrange((ispe + 8)..<(ispe + 16), with: [UInt8](repeating: 0, count: 8))
        XCTAssertEqual(try verify(zero, .avif).error?.message.hasPrefix("invalid AVIF: "), true)
        // Thousands of grid cells, each asking for its own AV1 decoder: refused before any is made.
        let grid = try AVIFFixture.sharedGrid(columns: 255, rows: 256, cell: 1)
        XCTAssertEqual(try verify(grid, .avif).error?.kind, .tooLarge)
    }

    func testAnILocBoxThatClaimsMoreThanItHoldsIsMalformedNotLarge() throws {
        let bytes = try AVIFFixture(width: 16, height: 16, channels: 3).encoded()
        // The box's type, then version and flags, the field sizes, the item count, the first item.
        let type = try XCTUnwrap((0..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == Array("iloc".utf8) })
        let version = Int(bytes[type + 4])
        let idSize = version < 2 ? 2 : 4
        let baseOffsetSize = Int(bytes[type + 9] >> 4)
        let firstItem = type + 10 + idSize
        let extentCount = firstItem + idSize + (version >= 1 ? 2 : 0) + 2 + baseOffsetSize
        for damaged in [(at: extentCount, value: UInt16(0xffff)), (at: type + 10, value: UInt16(0x7fff))] {
            var corrupt = bytes
            corrupt[damaged.at] = UInt8(damaged.value >> 8)
            corrupt[damaged.at + 1] = UInt8(damaged.value & 0xff)
            let error = try XCTUnwrap(try verify(corrupt, .avif).error)
            XCTAssertEqual(error.kind, .notAnImage, error.message)
            XCTAssertTrue(error.message.hasPrefix("invalid AVIF: malformed container"), error.message)
        }
    }

    func testAnotherFormatBehindTheMagic() throws {
        let png = try PNGSample(.rgb, bitDepth: 8, width: 4, height: 4).encoded()
        let bytes: [UInt8] = [0, 0, 0, 0x14] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1".utf8) + png
        XCTAssertEqual(try verify(bytes, .avif).error?.message.hasPrefix("invalid AVIF: "), true)
    }
}
