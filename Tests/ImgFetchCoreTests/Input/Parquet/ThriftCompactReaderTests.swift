@testable import ImgFetchCore
import XCTest

/// Thrift's compact protocol as parquet-format's metadata uses it, from hand-made bytes.
final class ThriftCompactReaderTests: XCTestCase {
    func testFieldsVarintsAndZigzag() throws {
        // Field 1 i32 = -3 (zigzag 5), field 3 (delta 2) binary "ab", field 20 (long form) i64 = 300,
        // field 21 bool true, stop.
        let bytes: [UInt8] = [0x15, 0x05, 0x28, 0x02, 0x61, 0x62, 0x06, 0x28, 0xD8, 0x04, 0x11, 0x00]
        var reader = ThriftCompactReader(bytes)
        var seen: [String] = []
        try reader.readStruct { reader, id, type throws(ParquetError) in
            switch (id, type) {
            case (1, .i32): seen.append("1=\(try reader.readI32())")
            case (3, .binary): seen.append("3=\(try reader.readString())")
            case (20, .i64): seen.append("20=\(try reader.readI64())")
            case (21, _): seen.append("21=\(try ThriftCompactReader.bool(type))")
            default: return false
            }
            return true
        }
        XCTAssertEqual(seen, ["1=-3", "3=ab", "20=300", "21=true"])
        XCTAssertEqual(reader.position, bytes.count)
    }

    func testUnknownFieldsAreSkippedByTheirType() throws {
        // Field 1: a list of 2 structs (each with an i32 field), field 2: a map of 1 string→i32,
        // field 3: a double, then field 4 i32 = 7.
        let bytes: [UInt8] = [0x19, 0x2C, 0x15, 0x02, 0x00, 0x15, 0x04, 0x00,
                              0x1B, 0x01, 0x85, 0x01, 0x78, 0x02,
                              0x17, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F,
                              0x15, 0x0E, 0x00]
        var reader = ThriftCompactReader(bytes)
        var four: Int32?
        try reader.readStruct { reader, id, _ throws(ParquetError) in
            guard id == 4 else { return false }
            four = try reader.readI32()
            return true
        }
        XCTAssertEqual(four, 7)
    }

    func testLiesAndBombsThrow() {
        // A list that claims more elements than bytes, a string past the end, a varint of 11 bytes,
        // structs nested past the limit, and an unknown type.
        let cases: [[UInt8]] = [
            [0x19, 0xFC, 0xFF, 0xFF, 0xFF, 0x07],
            [0x18, 0x10, 0x61],
            [0x16] + [UInt8](repeating: 0xFF, count: 10) + [0x01],
            [UInt8](repeating: 0x1C, count: 40),
            [0x1D, 0x00],
        ]
        for bytes in cases {
            var reader = ThriftCompactReader(bytes)
            XCTAssertThrowsError(try reader.readStruct { _, _, _ in false }, "\(bytes.prefix(6))")
        }
    }
}
