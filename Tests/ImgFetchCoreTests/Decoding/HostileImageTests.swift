import CImageCodec
import XCTest
@testable import ImgFetchCore

/// Pixel floods and zlib bombs (issue 6, decoders): small files that promise or inflate to huge
/// images are refused quickly, and every case's time and peak RSS growth is measured and bounded.
/// PNGVerifyTests and JPEGVerifyTests already cover a 64000² header; these go further: the JPEG
/// maximum, convert as well as verify, floods with the pixel limit off, and what the data does.
final class HostileImageTests: CodecTestCase {
    private let floodMessage = "image too large: 65500×65500 pixels exceeds --max-pixels (178956970)"
    private let noPixelLimit = DecodeLimits(maxPixels: 0)

    private func jpeg(progressive: Bool = false) throws -> [UInt8] {
        try Fixtures.jpeg(Fixtures.gradient(width: 48, height: 32, channels: 3), width: 48, height: 32,
                          options: Fixtures.jpegOptions(progressive: progressive))
    }

    /// A fixture JPEG whose frame header claims `side` × `side` pixels.
    private func jpegFlood(side: Int, progressive: Bool = false) throws -> [UInt8] {
        var segments = try JPEGSegments(try jpeg(progressive: progressive))
        try segments.setSize(width: side, height: side)
        return segments.file()
    }

    // MARK: - JPEG pixel floods

    func testJPEGPixelFloodAtTheFormatMaximumIsRefusedFromTheHeader() throws {
        let bytes = try jpegFlood(side: 65500)
        XCTAssertLessThan(bytes.count, 2048)
        let refused = Result<ImageInfo, DownloadError>.failure(DownloadError(.tooLarge, floodMessage))
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "65500² baseline JPEG", seconds: 1, megabytes: 4), refused)
        let (converted, written) = try convertBounded(bytes, .jpeg, "65500² baseline JPEG", seconds: 1, megabytes: 4)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.tooLarge, floodMessage)))
        XCTAssertEqual(written, 0, "nothing is written for a refused header")
        let progressive = try jpegFlood(side: 65500, progressive: true)
        XCTAssertEqual(try verifyBounded(progressive, .jpeg, "65500² progressive JPEG", seconds: 1, megabytes: 4), refused)
    }

    func testProgressiveJPEGPixelFloodWithoutAPixelLimitStopsAtTheMemoryCap() throws {
        // Without --max-pixels, a progressive 65500² frame would need ~12 GiB of coefficient
        // buffers; the header's estimate is over DecodeLimits.maxMemory, which refuses it up front.
        let bytes = try jpegFlood(side: 65500, progressive: true)
        let verified = try verifyBounded(bytes, .jpeg, limits: noPixelLimit, "65500² progressive JPEG, no pixel limit", megabytes: 8)
        XCTAssertEqual(verified, .failure(DownloadError(.tooLarge, "image too large: decoding it needs about 12289 MiB, over "
                                                            + "--max-decode-memory (256 MiB)")))
        let (converted, _) = try convertBounded(bytes, .jpeg, limits: noPixelLimit, "65500² progressive JPEG, no pixel limit", megabytes: 8)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.tooLarge, "image too large: decoding it needs about 12289 MiB, "
                                                                      + "over --max-decode-memory (256 MiB)")))
    }

    func testBaselineJPEGPixelFloodWithoutAPixelLimitFailsWhereTheDataEnds() throws {
        // Baseline JPEG streams a few rows at a time: the 48×32 image's data runs into EOI within
        // the first row of 65500-pixel MCUs, long before anything grows.
        let bytes = try jpegFlood(side: 65500)
        let message = "invalid JPEG: Corrupt JPEG data: premature end of data segment"
        let result = try verifyBounded(bytes, .jpeg, limits: noPixelLimit, "65500² baseline JPEG, no pixel limit", megabytes: 8)
        XCTAssertEqual(result, .failure(DownloadError(.notAnImage, message)))
        let (converted, _) = try convertBounded(bytes, .jpeg, limits: noPixelLimit, "65500² baseline JPEG, no pixel limit", megabytes: 8)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.notAnImage, message)))
    }

    // MARK: - PNG pixel floods

    func testPNGPixelFloodWithATinyIDATIsRefusedBeforeInflating() throws {
        // The IDAT is not even zlib and its CRC is wrong: the size alone decides, before libpng starts.
        var bytes = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 30000, height: 30000), idat: Array("not zlib".utf8))
        PNGChunks.breakCRC(&bytes, at: try XCTUnwrap(PNGChunks.offset(of: "IDAT", in: bytes)))
        let message = "image too large: 30000×30000 pixels exceeds --max-pixels (178956970)"
        XCTAssertEqual(try verifyBounded(bytes, .png, "30000² PNG", seconds: 1, megabytes: 4), .failure(DownloadError(.tooLarge, message)))
        let (converted, written) = try convertBounded(bytes, .png, "30000² PNG", seconds: 1, megabytes: 4)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.tooLarge, message)))
        XCTAssertEqual(written, 0)
    }

    func testPNGPixelFloodsOfExtremeShapes() throws {
        let idat = ZeroBomb.zlib(inflatedSize: 16)
        let cases: [(UInt32, UInt32, String)] = [
            (1_000_001, 1, "image too large: width 1000001 exceeds the limit (1000000)"),
            (1, 1_000_001, "image too large: height 1000001 exceeds the limit (1000000)"),
            (1_000_000, 179, "image too large: 1000000×179 pixels exceeds --max-pixels (178956970)"),
            (0x7FFF_FFFF, 0x7FFF_FFFF, "image too large: width 2147483647 exceeds the limit (1000000)"),
        ]
        for (width, height, message) in cases {
            let bytes = HostilePNG.file(ihdr: HostilePNG.ihdr(width: width, height: height, colorType: 6), idat: idat)
            XCTAssertEqual(try verifyBounded(bytes, .png, "\(width)×\(height) PNG", seconds: 1, megabytes: 4),
                           .failure(DownloadError(.tooLarge, message)))
        }
    }

    func testPNGPixelFloodWithoutLimitsFailsWhereTheDataEnds() throws {
        let unlimited = DecodeLimits(maxPixels: 0, maxWidth: 0, maxHeight: 0)
        let idat = ZeroBomb.zlib(inflatedSize: 1000)
        let flat = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 30000, height: 30000), idat: idat)
        XCTAssertEqual(try verifyBounded(flat, .png, limits: unlimited, "30000² PNG, no limits", megabytes: 8),
                       .failure(DownloadError(.notAnImage, "invalid PNG: Not enough image data")))
        // Interlaced, the conversion first sets up a 2.7 GB raster: a sparse scratch file, not memory.
        let interlaced = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 30000, height: 30000, colorType: 2, interlaced: true), idat: idat)
        let (converted, written) = try convertBounded(interlaced, .png, limits: unlimited, "30000² interlaced PNG, no limits", megabytes: 8)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.notAnImage, "invalid PNG: Not enough image data")))
        XCTAssertEqual(written, 0)
    }

    // MARK: - zlib bombs

    func testPNGInflatingTenMegabytesAsDeclaredStreamsInBoundedMemory() throws {
        // 9.8 KB of IDAT inflating to 10 MB: a bomb, but one its header owns up to, within
        // --max-pixels: it is decoded, and row by row.
        let width = 100, height = 100_000
        let bytes = HostilePNG.file(ihdr: HostilePNG.ihdr(width: UInt32(width), height: UInt32(height)),
                                    idat: ZeroBomb.zlib(inflatedSize: (width + 1) * height))
        XCTAssertLessThan(bytes.count, 10_000)
        XCTAssertEqual(try verifyBounded(bytes, .png, "10 MB zlib stream in a 10 KB PNG"),
                       .success(ImageInfo(width: width, height: height, channels: 1, bitDepth: 8, verified: true)))
        let (converted, written) = try convertBounded(bytes, .png, "10 MB zlib stream in a 10 KB PNG", seconds: 10)
        XCTAssertEqual(try converted.get().width, width)
        XCTAssertEqual(written, "P6\n100 100000\n255\n".utf8.count + width * height * 3)
    }

    func testPNGDataBeyondTheDeclaredImageIsAnError() throws {
        let stream = ZeroBomb.zlib(inflatedSize: 101 * 100_000)
        for interlaced in [false, true] {
            let bytes = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 100, height: 1000, interlaced: interlaced), idat: stream)
            XCTAssertEqual(try verifyBounded(bytes, .png, "100× too much IDAT, interlaced \(interlaced)", seconds: 1, megabytes: 4),
                           .failure(DownloadError(.notAnImage, "invalid PNG: IDAT: Too much image data")))
        }
        // A stream of exactly the right size, with bytes after its end inside the IDAT.
        let exact = ZeroBomb.zlib(inflatedSize: 101 * 1000)
        let trailing = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 100, height: 1000), idat: exact + [1, 2, 3, 4])
        XCTAssertEqual(try verifyBounded(trailing, .png, "bytes after the zlib stream", seconds: 1, megabytes: 4),
                       .failure(DownloadError(.notAnImage, "invalid PNG: IDAT: Extra compressed data")))
        let clean = HostilePNG.file(ihdr: HostilePNG.ihdr(width: 100, height: 1000), idat: exact)
        XCTAssertEqual(try verify(clean, .png).map(\.height), .success(1000), "the same stream alone is fine")
    }

    func testPNGGigabyteZlibBombBehindASmallHeaderStopsEarly() throws {
        // 2 MB of IDAT inflating to 2 GiB behind a header that declares 100 KB. libpng itself
        // would inflate all of it (8 s) before warning; the codec stops 16 KiB of input past the last row.
        let stream = ZeroBomb.zlib(inflatedSize: 2 << 30)
        XCTAssertLessThan(stream.count, 2_100_000)
        let idat = HostilePNG.chunk("IDAT", stream)
        let shapes: [(UInt32, UInt32, Bool)] = [(100, 1000, false), (100, 1000, true), (9, 9, true), (1, 1, true), (1, 1, false)]
        for (width, height, interlaced) in shapes {
            let label = "2 GiB zlib bomb, \(width)×\(height)\(interlaced ? " interlaced" : "")"
            let ihdr = HostilePNG.ihdr(width: width, height: height, interlaced: interlaced)
            let bytes = HostilePNG.signature + ihdr + idat + HostilePNG.chunk("IEND", [])
            XCTAssertEqual(try verifyBounded(bytes, .png, label, seconds: 2, megabytes: 8),
                           .failure(DownloadError(.notAnImage, "invalid PNG: IDAT: Too much image data")))
            let (converted, _) = try convertBounded(bytes, .png, label, seconds: 2, megabytes: 8)
            XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.notAnImage, "invalid PNG: IDAT: Too much image data")))
        }
    }

    func testZeroBombStreamsAreValidZlib() throws {
        // The bomb builder itself, checked by libpng: exact sizes decode cleanly, at about 1000:1.
        for (width, height) in [(1, 1), (257, 1), (258, 3), (100, 1000)] {
            let stream = ZeroBomb.zlib(inflatedSize: (width + 1) * height)
            let bytes = HostilePNG.file(ihdr: HostilePNG.ihdr(width: UInt32(width), height: UInt32(height)), idat: stream)
            XCTAssertEqual(try verify(bytes, .png), .success(ImageInfo(width: width, height: height, channels: 1, bitDepth: 8, verified: true)))
        }
        XCTAssertLessThan(ZeroBomb.zlib(inflatedSize: 10_000_000).count, 10_000)
    }
}
