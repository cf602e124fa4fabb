import XCTest
@testable import ImgFetchCore

/// `ExifReader` on hand-made TIFF blocks: both byte orders, rationals and coded values as exifread
/// prints them, and hostile blocks (offsets past the end, a directory that points at itself,
/// huge counts) giving what can be read and never more.
final class ExifReaderTests: XCTestCase {
    /// A little- or big-endian TIFF block with one IFD0 of `entries` (tag, type, count, value or
    /// offset bytes), then `tail` at offset 8 + 2 + 12n + 4.
    private func block(little: Bool, _ entries: [(UInt16, UInt16, UInt32, [UInt8])], tail: [UInt8] = [], next: UInt32 = 0) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { little ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) -> [UInt8] { little ? u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) : u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) }
        var bytes: [UInt8] = (little ? Array("II".utf8) : Array("MM".utf8)) + u16(42) + u32(8)
        bytes += u16(UInt16(entries.count))
        for (tag, type, count, value) in entries { bytes += u16(tag) + u16(type) + u32(count) + value }
        return bytes + u32(next) + tail
    }

    func testValuesPrintAsExifreadPrintsThem() {
        for little in [true, false] {
            func u16(_ v: UInt16) -> [UInt8] { little ? [UInt8(v & 0xFF), UInt8(v >> 8), 0, 0] : [UInt8(v >> 8), UInt8(v & 0xFF), 0, 0] }
            func u32(_ v: UInt32) -> [UInt8] {
                little ? [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
                    : [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
            }
            // IFD0 at 8, 4 entries (8 + 2 + 48 + 4 = 62): the rational and the text follow.
            let tail = u32(10) + u32(1250) + Array("A long model name\0".utf8)
            let tags = ExifReader.tags(in: block(little: little, [
                (0x0112, 3, 1, u16(6)),           // Orientation, coded
                (0x011A, 5, 1, u32(62)),          // XResolution 10/1250 = 1/125
                (0x010F, 2, 4, Array("Cam\0".utf8)),  // Make, inline
                (0x0110, 2, 18, u32(70)),         // Model, at an offset
            ], tail: tail))
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: tags), ["Image Orientation": "Rotated 90 CW", "Image XResolution": "1/125",
                                                                    "Image Make": "Cam", "Image Model": "A long model name"], "little: \(little)")
        }
    }

    func testHostileBlocksGiveWhatReadsAndStop() {
        // A value past the end is left out; an unknown type is left out; a tag not named is "Tag 0x…".
        let tags = ExifReader.tags(in: block(little: true, [
            (0x010F, 2, 100, [0xFF, 0xFF, 0, 0]),
            (0x0110, 99, 1, [0, 0, 0, 0]),
            (0xC0DE, 3, 2, [1, 0, 2, 0]),
            (0xC0DF, 3, 3, [1, 0, 2, 0]),
        ]))
        XCTAssertEqual(tags.map(\.0), ["Image Tag 0xC0DE"])
        XCTAssertEqual(tags.first?.1, "[1, 2]")
        // (0xC0DF: 3 shorts, 6 bytes, more than the inline 4: read from offset 0x00020001, past the end.)
        XCTAssertTrue(ExifReader.tags(in: Array("II*\0".utf8) + [0xFF, 0xFF, 0, 0]).isEmpty, "IFD0 past the end")
        XCTAssertTrue(ExifReader.tags(in: Array("XX*\0\u{8}\0\0\0".utf8)).isEmpty, "no byte order")
        // IFD1 pointing back at IFD0 is read once.
        let looped = ExifReader.tags(in: block(little: true, [(0x0112, 3, 1, [1, 0, 0, 0])], next: 8))
        XCTAssertEqual(looped.map(\.0), ["Image Orientation"])
        // A count of billions is refused, not allocated.
        XCTAssertTrue(ExifReader.tags(in: block(little: true, [(0x0111, 4, 0x4000_0000, [0, 0, 0, 0])])).isEmpty)
    }

    func testListsAndFractionsPrintAsPythonDoes() {
        XCTAssertEqual(ExifReader.tags(in: block(little: true, [(0x0102, 1, 3, [8, 8, 8, 0])])).first?.1, "[8, 8, 8]")
        let many = ExifReader.tags(in: block(little: true, [(0x0102, 1, 60, [26, 0, 0, 0])], tail: [UInt8](repeating: 7, count: 60)))
        XCTAssertEqual(many.first?.1, "[" + Array(repeating: "7", count: 20).joined(separator: ", ") + ", ... ]")
    }
}
