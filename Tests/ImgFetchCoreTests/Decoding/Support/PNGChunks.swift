/// Byte-level surgery on PNG files: find chunks, rewrite them, fix or break their CRCs.
enum PNGChunks {
    /// Offset of the first chunk of `type` (at its length field), or nil.
    static func offset(of type: String, in png: [UInt8]) -> Int? {
        var offset = 8
        while offset + 12 <= png.count {
            let length = Int(be32(png, offset))
            if String(decoding: png[offset + 4..<offset + 8], as: UTF8.self) == type { return offset }
            offset += 12 + length
        }
        return nil
    }

    /// Recomputes the CRC of the chunk at `offset`.
    static func fixCRC(_ png: inout [UInt8], at offset: Int) {
        let length = Int(be32(png, offset))
        let crc = crc32(png[offset + 4..<offset + 8 + length])
        for i in 0..<4 { png[offset + 8 + length + i] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(i))) }
    }

    /// Flips a bit in the CRC of the chunk at `offset`.
    static func breakCRC(_ png: inout [UInt8], at offset: Int) {
        let length = Int(be32(png, offset))
        png[offset + 8 + length] ^= 0x01
    }

    /// Sets IHDR's width and height and fixes its CRC: a header that promises any size.
    static func setSize(_ png: inout [UInt8], width: UInt32, height: UInt32) {
        for i in 0..<4 {
            png[16 + i] = UInt8(truncatingIfNeeded: width >> (24 - 8 * UInt32(i)))
            png[20 + i] = UInt8(truncatingIfNeeded: height >> (24 - 8 * UInt32(i)))
        }
        fixCRC(&png, at: 8)
    }

    static func be32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func crc32<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
