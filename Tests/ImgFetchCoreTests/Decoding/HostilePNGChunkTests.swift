import XCTest
@testable import ImgFetchCore

/// Ancillary chunk floods (issue 6, decoders): thousands of chunks of every kind, compressed text
/// bombs, chunks that claim gigabytes and oversized Exif. A valid image among them is still
/// accepted, with the same answer every time, at no memory cost. PNGVerifyTests covers 20,000
/// plain tEXt chunks and CRC errors; these add the kinds libpng would otherwise allocate for.
final class HostilePNGChunkTests: CodecTestCase {
    private let width = 16, height = 16
    private var image: ImageInfo { ImageInfo(width: width, height: height, channels: 1, bitDepth: 8, verified: true) }

    /// A valid 16×16 gray PNG with `before` between IHDR and IDAT and `after` between IDAT and IEND.
    private func png(before: [UInt8] = [], after: [UInt8] = []) -> [UInt8] {
        HostilePNG.file(ihdr: HostilePNG.ihdr(width: UInt32(width), height: UInt32(height)), beforeIDAT: before,
                        idat: ZeroBomb.zlib(inflatedSize: (width + 1) * height), afterIDAT: after)
    }

    /// `chunks` repeated `count` times, built without intermediate arrays (the floods run to megabytes).
    private func repeated(_ chunks: [[UInt8]], count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunks.reduce(0) { $0 + $1.count } * count)
        for _ in 0..<count {
            for chunk in chunks { bytes += chunk }
        }
        return bytes
    }

    func testThousandsOfCompressedTextBombsAreNeverInflated() throws {
        // 2,200 zTXt and iTXt chunks of 1 KB, each inflating to 1 MB: 2.2 GB of text if decompressed.
        let bomb = ZeroBomb.zlib(inflatedSize: 1 << 20)
        let zTXt = HostilePNG.chunk("zTXt", Array("Comment".utf8) + [0, 0] + bomb)
        let iTXt = HostilePNG.chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 1, 0, 0, 0] + bomb)
        let bytes = png(before: repeated([zTXt, iTXt], count: 1000), after: repeated([zTXt, iTXt], count: 100))
        XCTAssertLessThan(bytes.count, 3_000_000)
        let path = try write(bytes)
        for run in 1...2 {
            XCTAssertEqual(verifyBounded(path: path, .png, "2,200 zTXt/iTXt bombs, run \(run)", seconds: 2, megabytes: 8), .success(image))
        }
        let (converted, _) = convertBounded(path: path, .png, "2,200 zTXt/iTXt bombs", seconds: 2, megabytes: 8)
        XCTAssertEqual(try converted.get().width, width)
    }

    func testThousandsOfAncillaryChunksOfEveryKindCostNoMemory() throws {
        // 3,000 rounds of every ancillary chunk libpng knows, a compressed iCCP, a 600-entry sPLT
        // and a 4 KB private chunk: 15 MB. Duplicates are dropped and nothing is kept, so memory
        // stays flat (keeping the private chunks alone would cost 12 MB).
        let rounds: [[UInt8]] = [
            HostilePNG.chunk("tEXt", Array("Title".utf8) + [0] + Array("hostile".utf8)),
            HostilePNG.chunk("iTXt", Array("Author".utf8) + [0, 0, 0] + Array("en".utf8) + [0, 0] + Array("someone".utf8)),
            HostilePNG.chunk("iCCP", Array("icc".utf8) + [0, 0] + ZeroBomb.zlib(inflatedSize: 1 << 16)),
            HostilePNG.chunk("sPLT", Array("palette".utf8) + [0, 8] + [UInt8](repeating: 7, count: 6 * 600)),
            HostilePNG.chunk("prVt", [UInt8](repeating: 0xA5, count: 4096)),
            HostilePNG.chunk("tIME", [0x07, 0xE8, 1, 1, 0, 0, 0]),
            HostilePNG.chunk("pHYs", [0, 0, 0x0B, 0x13, 0, 0, 0x0B, 0x13, 1]),
            HostilePNG.chunk("gAMA", HostilePNG.be32(45455)),
            HostilePNG.chunk("cHRM", [UInt8](repeating: 1, count: 32)),
            HostilePNG.chunk("sBIT", [8]),
            HostilePNG.chunk("sRGB", [0]),
            HostilePNG.chunk("bKGD", [0, 0]),
            HostilePNG.chunk("oFFs", [UInt8](repeating: 0, count: 9)),
            HostilePNG.chunk("pCAL", Array("cal".utf8) + [0] + [UInt8](repeating: 0, count: 8) + [0, 1] + Array("unit".utf8) + [0] + Array("1.0".utf8)),
            HostilePNG.chunk("sCAL", [1] + Array("1.0".utf8) + [0] + Array("2.0".utf8)),
            HostilePNG.chunk("eXIf", TIFFBlock().bytes + [0, 0]),
        ]
        let bytes = png(before: repeated(rounds, count: 3000), after: repeated([rounds[0], rounds[4]], count: 1000))
        XCTAssertGreaterThan(bytes.count, 15_000_000)
        let path = try write(bytes)
        for run in 1...2 {
            XCTAssertEqual(verifyBounded(path: path, .png, "48,000 ancillary chunks, run \(run)", seconds: 5, megabytes: 6), .success(image))
        }
        let (converted, _) = convertBounded(path: path, .png, "48,000 ancillary chunks", seconds: 5, megabytes: 6)
        XCTAssertEqual(try converted.get().height, height)
    }

    func testChunksClaimingTwoGigabytesFailWhereTheFileEnds() throws {
        // libpng allocates and zeroes a buffer of the declared length for pCAL and sCAL before
        // reading them (its 8 MB chunk limit is only a warning): 2 GiB touched, 10 s, unless skipped.
        for type in ["pCAL", "sCAL", "eXIf", "tEXt", "zTXt", "iTXt", "iCCP", "sPLT", "prVt", "tIME", "gAMA", "cHRM", "bKGD"] {
            let claim = HostilePNG.be32(0x7FFF_FFFF) + Array(type.utf8) + [UInt8](repeating: 0, count: 100)
            for bytes in [png(before: claim), png(after: claim)] {
                XCTAssertEqual(try verifyBounded(bytes, .png, "\(type) claiming 2 GiB", seconds: 1, megabytes: 8),
                               .failure(DownloadError(.truncated, "invalid PNG: Premature end of PNG file")), type)
            }
        }
        let overflow = HostilePNG.be32(0x8000_0000) + Array("prVt".utf8) + [UInt8](repeating: 0, count: 100)
        try assertRejected(png(before: overflow), .png, "invalid PNG: PNG unsigned integer out of range")
    }

    func testLargeExifChunkIsReadOnlyForItsOrientation() throws {
        // A 12 MB eXIf: libpng would hold it twice (24 MB); the codec keeps its first 64 KiB.
        var tiff = TIFFBlock()
        tiff.u16(1)
        tiff.entry(tag: 0x0112, type: 3, count: 1, value: 6)
        tiff.u32(0)
        let exif = HostilePNG.chunk("eXIf", tiff.bytes + [UInt8](repeating: 0, count: 12_000_000))
        let oriented = ImageInfo(width: width, height: height, channels: 1, bitDepth: 8, orientation: 6, verified: true)
        XCTAssertEqual(try verifyBounded(png(before: exif), .png, "12 MB eXIf", seconds: 2, megabytes: 8), .success(oriented))
        // The first eXIf counts, later ones and those after the image data do not.
        let upright = HostilePNG.chunk("eXIf", TIFFBlock().bytes + [0, 0])
        XCTAssertEqual(try verify(png(before: repeated([exif], count: 1) + repeated([upright], count: 2000)), .png), .success(oriented))
        XCTAssertEqual(try verify(png(before: repeated([upright], count: 2000) + exif), .png), .success(image))
        XCTAssertEqual(try verify(png(after: exif), .png), .success(image))
    }

    func testUnknownCriticalChunkIsRefused() throws {
        try assertRejected(png(before: HostilePNG.chunk("ABCD", [1, 2, 3])), .png, "invalid PNG: ABCD: unhandled critical chunk")
    }
}
