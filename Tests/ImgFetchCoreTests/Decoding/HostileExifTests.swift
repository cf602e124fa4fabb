import XCTest
@testable import ImgFetchCore

/// Malformed Exif (issue 6, decoders): offsets pointing outside the block, IFD loops, wrong types
/// and counts, impossible values. None may crash, and each leaves the image upright (orientation
/// 1), so a conversion keeps the stored size. JPEGVerifyTests and PNGVerifyTests cover valid Exif.
final class HostileExifTests: CodecTestCase {
    private let width = 48, height = 32

    /// TIFF blocks that must all read as "no orientation".
    private var malformed: [(String, [UInt8])] {
        var cases: [(String, TIFFBlock)] = []
        cases.append(("IFD0 past the end", TIFFBlock(ifdOffset: 1000)))
        cases.append(("IFD0 at 0xFFFFFFFF", TIFFBlock(ifdOffset: 0xFFFF_FFFF)))
        cases.append(("IFD0 inside the header", TIFFBlock(ifdOffset: 4)))
        cases.append(("bad byte order", { var t = TIFFBlock(); t.bytes[0] = UInt8(ascii: "X"); return t }()))
        cases.append(("bad magic", TIFFBlock(magic: 43)))
        var truncatedEntries = TIFFBlock()
        truncatedEntries.u16(0xFFFF)  // 65,535 entries promised, one present
        truncatedEntries.entry(tag: 0x010F, type: 2, count: 0xFFFF_FFFF, value: 0xFFFF)
        cases.append(("65,535 entries promised", truncatedEntries))
        var cutShort = TIFFBlock()
        cutShort.u16(1)
        cutShort.u16(0x0112)
        cutShort.u16(3)
        cases.append(("orientation entry cut short", cutShort))
        for (label, type, count, value): (String, UInt16, UInt32, UInt16) in [
            ("orientation 0", 3, 1, 0), ("orientation 9", 3, 1, 9), ("orientation 0xFFFF", 3, 1, 0xFFFF),
            ("orientation as LONG", 4, 1, 6), ("orientation count 2", 3, 2, 6), ("orientation count 0", 3, 0, 6),
            ("orientation count 0xFFFFFFFF", 3, 0xFFFF_FFFF, 6),
        ] {
            var block = TIFFBlock(bigEndian: value % 2 == 0)
            block.u16(1)
            block.entry(tag: 0x0112, type: type, count: count, value: value)
            block.u32(0)
            cases.append((label, block))
        }
        var loop = TIFFBlock()
        loop.u16(1)
        loop.entry(tag: 0x8769, type: 4, count: 1, value: 0)  // Exif sub-IFD pointing at the header
        loop.u32(8)  // next IFD: IFD0 itself
        cases.append(("IFD loop without orientation", loop))
        var wild = TIFFBlock(bigEndian: false)
        wild.u16(3)
        for tag: UInt16 in [0x010E, 0x8769, 0x8825] { wild.entry(tag: tag, type: 4, count: 0x4000_0000, value: 0xFFFF) }
        wild.u32(0xFFFF_FFF0)
        cases.append(("wild offsets, no orientation", wild))
        return cases.map { ($0.0, $0.1.bytes) } + [("7-byte block", Array("MM\0*\0\0\0".utf8)), ("empty block", [])]
    }

    private func jpeg(exif: [[UInt8]]) throws -> [UInt8] {
        let base = try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: 3), width: width, height: height)
        return Array(base.prefix(2)) + exif.flatMap { JPEGSegments.segment(0xE1, Array("Exif".utf8) + [0, 0] + $0) } + base.dropFirst(2)
    }

    private func assertUpright(_ bytes: [UInt8], _ format: ImageFormat, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try verify(bytes, format).map(\.orientation), .success(1), label, file: file, line: line)
        let (converted, _) = try convert(bytes, format, to: .ppm)
        XCTAssertEqual(converted.map { [$0.width, $0.height] }, .success([width, height]), label, file: file, line: line)
    }

    func testMalformedExifInJPEGLeavesTheImageUpright() throws {
        for (label, tiff) in malformed {
            try assertUpright(try jpeg(exif: [tiff]), .jpeg, label)
        }
    }

    func testMalformedExifInPNGLeavesTheImageUpright() throws {
        let sample = PNGSample(.rgb, bitDepth: 8, width: width, height: height)
        let png = try sample.encoded()
        let idat = try XCTUnwrap(PNGChunks.offset(of: "IDAT", in: png))
        for (label, tiff) in malformed {
            let bytes = Array(png[..<idat]) + HostilePNG.chunk("eXIf", tiff) + png[idat...]
            try assertUpright(bytes, .png, label)
        }
    }

    func testOnlyIFD0IsReadSoLoopsAndWildOffsetsElsewhereDoNotMatter() throws {
        // The orientation is found in IFD0; the loop and the wild offsets around it are never followed.
        var block = TIFFBlock()
        block.u16(3)
        block.entry(tag: 0x8769, type: 4, count: 1, value: 0)
        block.entry(tag: 0x010F, type: 2, count: 0x7FFF_FFFF, value: 0xFFFF)
        block.entry(tag: 0x0112, type: 3, count: 1, value: 6)
        block.u32(8)
        let bytes = try jpeg(exif: [block.bytes])
        XCTAssertEqual(try verify(bytes, .jpeg).map(\.orientation), .success(6))
        let (converted, _) = try convert(bytes, .jpeg, to: .ppm)
        XCTAssertEqual(converted.map { [$0.width, $0.height] }, .success([height, width]))
    }

    func testTheFirstExifSegmentDecidesEvenWhenMalformed() throws {
        var valid = TIFFBlock()
        valid.u16(1)
        valid.entry(tag: 0x0112, type: 3, count: 1, value: 6)
        valid.u32(0)
        try assertUpright(try jpeg(exif: [TIFFBlock(ifdOffset: 1000).bytes, valid.bytes]), .jpeg, "malformed, then valid")
        XCTAssertEqual(try verify(try jpeg(exif: [valid.bytes, TIFFBlock(ifdOffset: 1000).bytes]), .jpeg).map(\.orientation), .success(6))
    }

    func testExifSegmentLongerThanTheFile() throws {
        let base = try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: 3), width: width, height: height)
        let claim: [UInt8] = [0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif".utf8) + [0, 0] + TIFFBlock().bytes
        try assertRejected(Array(base.prefix(2)) + claim, .jpeg, "invalid JPEG: Premature end of JPEG file", kind: .truncated)
        try assertRejected(Array(base.prefix(2)) + claim + base.dropFirst(2).prefix(100), .jpeg, "invalid JPEG: Premature end of JPEG file", kind: .truncated)
    }
}
