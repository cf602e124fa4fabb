/// Structure-aware mutations of JPEG and PNG files: bit flips, interesting bytes, truncations,
/// segment or chunk shuffles, duplications and deletions, corrupted length fields and frame sizes.
/// PNG chunks get their CRCs recomputed most of the time, so that damage reaches past the CRC check.
/// Other formats are cut into fixed slices after their header, with little-endian fields.
struct FuzzMutator {
    enum Container: Equatable {
        case jpeg, png
        /// A header of `header` bytes, then slices; the image's width and height are 16-bit
        /// (`wide` false) or 32-bit little-endian fields at `sizeOffsets`.
        case other(header: Int, sizeOffsets: [Int], wide: Bool)
    }

    static let interestingBytes: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE]
    static let interestingLengths: [UInt32] = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]
    static let interestingSizes: [UInt32] = [0, 1, 2, 7, 8, 9, 255, 256, 4097, 65500, 65535, 0x7FFF_FFFF, 0xFFFF_FFFF]

    let container: Container

    /// One mutant of `input`, and what was done to it.
    func mutate(_ input: [UInt8], using rng: inout SplitMix64) -> (bytes: [UInt8], steps: [String]) {
        var bytes = input
        var steps: [String] = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            steps.append(mutateOnce(&bytes, using: &rng))
        }
        if container == .png && Int.random(in: 0..<4, using: &rng) != 0 {
            Self.fixCRCs(&bytes)
            steps.append("CRCs fixed")
        }
        return (bytes, steps)
    }

    private func mutateOnce(_ bytes: inout [UInt8], using rng: inout SplitMix64) -> String {
        guard bytes.count > 2 else { return "too short to mutate" }
        var units: [ArraySlice<UInt8>]
        switch container {
        case .jpeg: units = Self.jpegUnits(bytes)
        case .png: units = Self.pngUnits(bytes)
        case .other(let header, _, _): units = Self.slices(bytes, header: header)
        }
        switch Int.random(in: 0..<9, using: &rng) {
        case 0:
            let count = Int.random(in: 1...8, using: &rng)
            for _ in 0..<count { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng) }
            return "\(count) bit flips"
        case 1:
            let count = Int.random(in: 1...4, using: &rng)
            for _ in 0..<count { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = Self.interestingBytes.randomElement(using: &rng)! }
            return "\(count) interesting bytes"
        case 2:
            let length = Int.random(in: 0..<bytes.count, using: &rng)
            bytes.removeSubrange(length...)
            return "truncated to \(length)"
        case 3 where units.count > 2:
            let a = Int.random(in: 1..<units.count, using: &rng), b = Int.random(in: 1..<units.count, using: &rng)
            units.swapAt(a, b)
            bytes = Array(units.joined())
            return "units \(a) and \(b) swapped"
        case 4 where units.count > 1:
            let source = Int.random(in: 1..<units.count, using: &rng), copies = Int.random(in: 1...3, using: &rng)
            let target = Int.random(in: 1...units.count, using: &rng)
            units.insert(contentsOf: Array(repeating: units[source], count: copies), at: target)
            bytes = Array(units.joined())
            return "unit \(source) copied \(copies)× to \(target)"
        case 5 where units.count > 2:
            let index = Int.random(in: 1..<units.count, using: &rng)
            units.remove(at: index)
            bytes = Array(units.joined())
            return "unit \(index) deleted"
        case 6 where units.count > 1:
            return corruptLength(&bytes, units: units, using: &rng)
        case 7:
            return corruptSize(&bytes, using: &rng)
        default:
            // A marker (JPEG) or a chunk-type-like byte run (PNG) spliced in anywhere.
            let position = Int.random(in: 0...bytes.count, using: &rng)
            let markers: [UInt8] = [0xD0, 0xD7, 0xD8, 0xD9, 0xDA, 0xC4, 0xDB, 0xDD, 0xC2, 0xE1, 0xFF, 0x00]
            let splice: [UInt8]
            switch container {
            case .jpeg: splice = [0xFF, markers.randomElement(using: &rng)!]
            case .png: splice = Array("IDAT".utf8)
            case .other: splice = (0..<4).map { _ in Self.interestingBytes.randomElement(using: &rng)! }
            }
            bytes.insert(contentsOf: splice, at: position)
            return "\(splice) inserted at \(position)"
        }
    }

    /// Rewrites the length field of a random segment or chunk with an interesting or nearby value.
    private func corruptLength(_ bytes: inout [UInt8], units: [ArraySlice<UInt8>], using rng: inout SplitMix64) -> String {
        let unit = units[Int.random(in: 1..<units.count, using: &rng)]
        let field = container == .jpeg ? unit.startIndex + 2 : unit.startIndex
        let width = container == .jpeg ? 2 : 4
        guard field + width <= bytes.count, unit.count >= width + (container == .jpeg ? 2 : 0) else { return "no length field" }
        // JPEG and PNG lengths are big-endian; the other formats' fields are little-endian.
        let bigEndian = container == .jpeg || container == .png
        let shift = { (i: Int) in UInt32(8 * (bigEndian ? width - 1 - i : i)) }
        let old = (0..<width).reduce(UInt32(0)) { $0 | UInt32(bytes[field + $1]) << shift($1) }
        let value = Bool.random(using: &rng) ? Self.interestingLengths.randomElement(using: &rng)! : old &+ UInt32(bitPattern: Int32.random(in: -3...3, using: &rng))
        for i in 0..<width { bytes[field + i] = UInt8(truncatingIfNeeded: value >> shift(i)) }
        return "length at \(field) set to \(value)"
    }

    /// Rewrites the image size in the JPEG frame header or the PNG IHDR.
    private func corruptSize(_ bytes: inout [UInt8], using rng: inout SplitMix64) -> String {
        let value = Self.interestingSizes.randomElement(using: &rng)!
        let height = Bool.random(using: &rng)
        switch container {
        case .png:
            let field = height ? 20 : 16
            guard bytes.count >= field + 4 else { return "no IHDR" }
            for i in 0..<4 { bytes[field + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
        case .jpeg:
            let frame = bytes.count < 10 ? nil : (0...bytes.count - 10).first { bytes[$0] == 0xFF && (0xC0...0xC2).contains(bytes[$0 + 1]) }
            guard let sof = frame else { return "no SOF" }
            let field = sof + (height ? 5 : 7)
            bytes[field] = UInt8(truncatingIfNeeded: value >> 8)
            bytes[field + 1] = UInt8(truncatingIfNeeded: value)
        case .other(_, let offsets, let wide):
            guard let field = offsets.randomElement(using: &rng), field + (wide ? 4 : 2) <= bytes.count else { return "no size field" }
            for i in 0..<(wide ? 4 : 2) { bytes[field + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        }
        return "\(height ? "height" : "width") set to \(value)"
    }

    /// SOI, each marker segment (a scan with its entropy-coded data), EOI; the rest as one unit.
    static func jpegUnits(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset + 1 < bytes.count && bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            var end = offset + 2
            if marker != 0xD8 && marker != 0xD9 && !(0xD0...0xD7).contains(marker) {
                guard offset + 4 <= bytes.count else { break }
                end = offset + 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
                if marker == 0xDA {
                    while end + 1 < bytes.count && !(bytes[end] == 0xFF && bytes[end + 1] != 0 && !(0xD0...0xD7).contains(bytes[end + 1])) {
                        end += 1
                    }
                }
            }
            guard end <= bytes.count, end > offset else { break }
            units.append(bytes[offset..<end])
            offset = end
        }
        if offset < bytes.count { units.append(bytes[offset...]) }
        return units
    }

    /// The header, then slices of 48 bytes.
    static func slices(_ bytes: [UInt8], header: Int) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = [bytes.prefix(header)]
        var offset = min(header, bytes.count)
        while offset < bytes.count {
            units.append(bytes[offset..<min(bytes.count, offset + 48)])
            offset += 48
        }
        return units
    }

    /// The signature and each chunk; the rest as one unit.
    static func pngUnits(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = [bytes.prefix(8)]
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(PNGChunks.be32(bytes, offset))
            guard offset + 12 + length <= bytes.count else { break }
            units.append(bytes[offset..<offset + 12 + length])
            offset += 12 + length
        }
        if offset < bytes.count { units.append(bytes[offset...]) }
        return units
    }

    /// Recomputes the CRC of every chunk whose length still fits the file.
    static func fixCRCs(_ bytes: inout [UInt8]) {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(PNGChunks.be32(bytes, offset))
            guard offset + 12 + length <= bytes.count else { return }
            let crc = HostilePNG.be32(CRC32.checksum(bytes[offset + 4..<offset + 8 + length]))
            bytes.replaceSubrange(offset + 8 + length..<offset + 12 + length, with: crc)
            offset += 12 + length
        }
    }
}
