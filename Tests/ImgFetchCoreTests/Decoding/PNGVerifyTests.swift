import XCTest
@testable import ImgFetchCore

final class PNGVerifyTests: CodecTestCase {
    private func sample(_ colorType: PNGSample.ColorType = .rgb, bitDepth: Int = 8, interlaced: Bool = false) -> PNGSample {
        var sample = PNGSample(colorType, bitDepth: bitDepth, width: 37, height: 23)
        sample.interlaced = interlaced
        return sample
    }

    private func verified(_ sample: PNGSample, orientation: Int = 1) -> Result<ImageInfo, DownloadError> {
        .success(ImageInfo(width: sample.width, height: sample.height, channels: sample.infoChannels,
                           bitDepth: sample.bitDepth, orientation: orientation, verified: true))
    }

    // MARK: - Valid files

    func testEveryColorTypeAndBitDepth() throws {
        let variants: [(PNGSample.ColorType, [Int])] = [
            (.gray, [1, 2, 4, 8, 16]), (.grayAlpha, [8, 16]), (.rgb, [8, 16]), (.rgba, [8, 16]), (.palette, [1, 2, 4, 8]),
        ]
        for (colorType, depths) in variants {
            for depth in depths {
                for interlaced in [false, true] {
                    let png = sample(colorType, bitDepth: depth, interlaced: interlaced)
                    XCTAssertEqual(try verify(try png.encoded(), .png), verified(png), "\(colorType) \(depth) interlaced \(interlaced)")
                }
            }
        }
    }

    func testTransparencyCountsAsAChannel() throws {
        var palette = sample(.palette, bitDepth: 4)
        palette.paletteAlpha = [0, 128, 255]
        XCTAssertEqual(try verify(try palette.encoded(), .png), verified(palette))
        var gray = sample(.gray, bitDepth: 8)
        gray.transparent = [17]
        XCTAssertEqual(try verify(try gray.encoded(), .png), verified(gray))
    }

    func testAPNGDefaultImage() throws {
        let png = sample()
        XCTAssertEqual(try verify(try png.encoded(apng: true), .png), verified(png))
    }

    func testExifOrientation() throws {
        let png = sample()
        XCTAssertEqual(try verify(try png.encoded(orientation: 6), .png), verified(png, orientation: 6))
    }

    func testThousandsOfTextChunksAreSkippedWithoutStoringThem() throws {
        // Text chunks are never stored (libpng skips them, still checking their CRCs), so a
        // chunk bomb costs reading time only; the image itself is valid and is accepted.
        let png = sample()
        let bytes = try png.encoded(textChunks: 20_000)
        XCTAssertGreaterThan(bytes.count, 20_000 * 30)
        XCTAssertEqual(try verify(bytes, .png), verified(png))
    }

    // MARK: - Hostile and damaged files

    func testTruncatedAtSeveralOffsets() throws {
        for interlaced in [false, true] {
            let bytes = try sample(interlaced: interlaced).encoded()
            for length in [1, 7, 8, 20, 33, 50, bytes.count / 2, bytes.count - 13, bytes.count - 12, bytes.count - 1] {
                try assertRejected(Array(bytes.prefix(length)), .png, "invalid PNG: Premature end of PNG file", kind: .truncated)
            }
        }
    }

    func testZeroBytes() throws {
        try assertRejected([], .png, "invalid PNG: Premature end of PNG file", kind: .truncated)
    }

    func testHTMLServedAsPNG() throws {
        try assertRejected(Array("<html><body>Moved</body></html>".utf8), .png, "invalid PNG: Not a PNG file (bad signature)")
    }

    func testCRCErrorsInCriticalAndAncillaryChunks() throws {
        let bytes = try sample().encoded(textChunks: 1)
        for chunk in ["IHDR", "IDAT", "IEND", "tEXt"] {
            var damaged = bytes
            PNGChunks.breakCRC(&damaged, at: try XCTUnwrap(PNGChunks.offset(of: chunk, in: damaged)))
            try assertRejected(damaged, .png, "invalid PNG: \(chunk): CRC error")
        }
    }

    func testBitFlipsInImageDataAreCaughtByZlibBeforeTheCRC() throws {
        let bytes = try sample().encoded()
        let idat = try XCTUnwrap(PNGChunks.offset(of: "IDAT", in: bytes))
        let length = Int(PNGChunks.be32(bytes, idat))
        var flipped = bytes
        flipped[idat + 8 + 100] ^= 0x04
        try assertRejected(flipped, .png, "invalid PNG: IDAT: incorrect data check")
        var flippedWithValidCRC = bytes
        flippedWithValidCRC[idat + 8 + length - 2] ^= 0x04  // inside the zlib stream's Adler-32
        PNGChunks.fixCRC(&flippedWithValidCRC, at: idat)
        try assertRejected(flippedWithValidCRC, .png, "invalid PNG: IDAT: incorrect data check")
    }

    func testPixelFloodHeaderIsRefusedBeforeDecoding() throws {
        var bytes = try sample().encoded()
        PNGChunks.setSize(&bytes, width: 64000, height: 64000)
        try assertRejected(bytes, .png, "image too large: 64000×64000 pixels exceeds --max-pixels (178956970)", kind: .tooLarge)
    }

    func testWidthAndHeightLimits() throws {
        let bytes = try sample().encoded()
        try assertRejected(bytes, .png, "image too large: width 37 exceeds the limit (36)", kind: .tooLarge,
                           limits: DecodeLimits(maxWidth: 36))
        try assertRejected(bytes, .png, "image too large: height 23 exceeds the limit (22)", kind: .tooLarge,
                           limits: DecodeLimits(maxHeight: 22))
    }

    func testOverlongWidthIsRefusedEvenWithoutLimits() throws {
        var bytes = try sample().encoded()
        PNGChunks.setSize(&bytes, width: 0x8000_0000, height: 1)
        try assertRejected(bytes, .png, "invalid PNG: PNG unsigned integer out of range", limits: DecodeLimits(maxPixels: 0, maxWidth: 0, maxHeight: 0))
    }

    func testMissingIHDR() throws {
        var bytes = try sample().encoded()
        bytes.removeSubrange(8..<33)
        try assertRejected(bytes, .png, "invalid PNG: IDAT: Missing IHDR before IDAT")
    }
}
