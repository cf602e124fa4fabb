/// Builders for hostile files: PNG chunk lists, JPEG segment lists, zlib streams of zeros at any
/// ratio, and TIFF blocks for Exif. They write bytes directly, so a test states exactly what a
/// hostile server would send.
enum HostilePNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// One chunk with its length and CRC.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(UInt32(data.count)) + typeBytes + data + be32(CRC32.checksum(typeBytes + data))
    }

    /// IHDR for an 8-bit image of `colorType` (0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA).
    static func ihdr(width: UInt32, height: UInt32, colorType: UInt8 = 0, bitDepth: UInt8 = 8, interlaced: Bool = false) -> [UInt8] {
        chunk("IHDR", be32(width) + be32(height) + [bitDepth, colorType, 0, 0, interlaced ? 1 : 0])
    }

    /// A whole PNG: signature, IHDR, `beforeIDAT`, one IDAT holding `idat`, `afterIDAT`, IEND.
    static func file(ihdr: [UInt8], beforeIDAT: [UInt8] = [], idat: [UInt8], afterIDAT: [UInt8] = []) -> [UInt8] {
        signature + ihdr + beforeIDAT + chunk("IDAT", idat) + afterIDAT + chunk("IEND", [])
    }

    /// The chunks of a PNG after its signature, as (type, data); stops at the first damaged length.
    static func chunks(of png: [UInt8]) -> [(type: String, data: [UInt8])] {
        var result: [(String, [UInt8])] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = Int(PNGChunks.be32(png, offset))
            guard offset + 12 + length <= png.count else { break }
            result.append((String(decoding: png[offset + 4..<offset + 8], as: UTF8.self), Array(png[offset + 8..<offset + 8 + length])))
            offset += 12 + length
        }
        return result
    }

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}

/// PNG's CRC-32, table-driven: the hostile files run to megabytes.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

/// zlib streams that inflate to `size` zero bytes at deflate's best ratio (about 1032:1): one
/// dynamic-Huffman block whose only symbols are a literal 0, "length 258" (1 bit), "distance 1"
/// (1 bit) and end-of-block. Written by hand because the tests have no zlib of their own.
enum ZeroBomb {
    static func zlib(inflatedSize size: Int) -> [UInt8] {
        precondition(size >= 1)
        var bits = BitWriter()
        bits.write(1, count: 1)   // BFINAL
        bits.write(2, count: 2)   // BTYPE: dynamic Huffman
        bits.write(29, count: 5)  // HLIT: 286 literal/length codes
        bits.write(0, count: 5)   // HDIST: 1 distance code
        bits.write(14, count: 4)  // HCLEN: 18 code-length codes, in the order below
        // Code lengths of the code-length alphabet (16,17,18,0,8,7,9,6,10,5,11,4,12,3,13,2,14,1): 18 gets 1 bit, 2 and 1 get 2.
        for length in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] { bits.write(UInt32(length), count: 3) }
        // Canonical codes: 18 → 0, 1 → 10, 2 → 11.
        let repeatZeros = { (count: UInt32, bits: inout BitWriter) in
            bits.code(0b0, length: 1)
            bits.write(count - 11, count: 7)
        }
        bits.code(0b11, length: 2)        // literal 0: length 2
        repeatZeros(138, &bits)           // literals 1...138
        repeatZeros(117, &bits)           // literals 139...255
        bits.code(0b11, length: 2)        // 256 (end of block): length 2
        repeatZeros(28, &bits)            // 257...284
        bits.code(0b10, length: 2)        // 285 (length 258): length 1
        bits.code(0b10, length: 2)        // distance code 0 (distance 1): length 1
        // Canonical literal/length codes: 285 → 0, 0 → 10, 256 → 11; distance 0 → 0.
        bits.code(0b10, length: 2)        // a literal zero to copy from
        bits.zeros((size - 1) / 258 * 2)  // each match: 285 then distance 0, both "0"
        for _ in 0..<(size - 1) % 258 { bits.code(0b10, length: 2) }  // the rest as literals
        bits.code(0b11, length: 2)        // end of block
        let adler = UInt32(size % 65521) << 16 | 1  // Adler-32 of zeros: a stays 1, b counts the bytes
        return [0x78, 0x01] + bits.bytes + HostilePNG.be32(adler)
    }

    /// deflate's bit order: fields least significant bit first, Huffman codes most significant first.
    private struct BitWriter {
        var bytes: [UInt8] = []
        private var used = 8

        mutating func write(_ value: UInt32, count: Int) {
            for i in 0..<count { push(value >> UInt32(i) & 1) }
        }

        mutating func code(_ code: UInt32, length: Int) {
            for i in stride(from: length - 1, through: 0, by: -1) { push(code >> UInt32(i) & 1) }
        }

        mutating func zeros(_ count: Int) {
            var remaining = count
            while remaining > 0 && used < 8 {
                push(0)
                remaining -= 1
            }
            bytes += [UInt8](repeating: 0, count: remaining / 8)
            for _ in 0..<remaining % 8 { push(0) }
        }

        private mutating func push(_ bit: UInt32) {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            bytes[bytes.count - 1] |= UInt8(bit) << UInt8(used)
            used += 1
        }
    }
}

/// JPEG byte surgery: the marker segments before the first scan, and whatever follows.
struct JPEGSegments {
    /// Marker (the byte after 0xFF) and payload (after the length field) of each segment after SOI.
    var segments: [(marker: UInt8, payload: [UInt8])]
    /// From the first SOS marker to the end of the file.
    var scans: [UInt8]

    init(_ jpeg: [UInt8]) throws {
        segments = []
        var offset = 2
        while offset + 4 <= jpeg.count && jpeg[offset] == 0xFF && jpeg[offset + 1] != 0xDA {
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            segments.append((jpeg[offset + 1], Array(jpeg[offset + 4..<offset + 2 + length])))
            offset += 2 + length
        }
        guard offset + 1 < jpeg.count, jpeg[offset + 1] == 0xDA else { throw Fixtures.Failure(description: "no SOS marker") }
        scans = Array(jpeg[offset...])
    }

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8(truncatingIfNeeded: payload.count + 2)] + payload
    }

    /// The first SOS segment (marker, length and header) without its entropy-coded data.
    var firstScanHeader: [UInt8] {
        Array(scans.prefix(2 + (Int(scans[2]) << 8 | Int(scans[3]))))
    }

    /// SOI, then `before`, the header segments, `after`, then `scans`.
    func file(before: [UInt8] = [], after: [UInt8] = [], scans: [UInt8]? = nil) -> [UInt8] {
        [0xFF, 0xD8] + before + segments.flatMap { Self.segment($0.marker, $0.payload) } + after + (scans ?? self.scans)
    }

    /// Sets the frame size in the SOFn segment.
    mutating func setSize(width: Int, height: Int) throws {
        guard let index = segments.firstIndex(where: { (0xC0...0xC2).contains($0.marker) }) else {
            throw Fixtures.Failure(description: "no SOF segment")
        }
        segments[index].payload.replaceSubrange(1..<5, with: [UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF)])
    }
}

/// TIFF blocks for Exif, field by field, so that any offset or count can lie.
struct TIFFBlock {
    var bigEndian = true
    var bytes: [UInt8] = []

    init(bigEndian: Bool = true, magic: UInt16 = 42, ifdOffset: UInt32 = 8) {
        self.bigEndian = bigEndian
        bytes = Array((bigEndian ? "MM" : "II").utf8)
        u16(magic)
        u32(ifdOffset)
    }

    mutating func u16(_ value: UInt16) {
        let pair = [UInt8(value >> 8), UInt8(value & 0xFF)]
        bytes += bigEndian ? pair : pair.reversed()
    }

    mutating func u32(_ value: UInt32) {
        let quad = HostilePNG.be32(value)
        bytes += bigEndian ? quad : quad.reversed()
    }

    /// An IFD entry: tag, type, count, and a 4-byte value field.
    mutating func entry(tag: UInt16, type: UInt16, count: UInt32, value: UInt16) {
        u16(tag)
        u16(type)
        u32(count)
        u16(value)
        u16(0)
    }

    /// The APP1 segment carrying this block.
    var app1: [UInt8] {
        JPEGSegments.segment(0xE1, Array("Exif".utf8) + [0, 0] + bytes)
    }
}
