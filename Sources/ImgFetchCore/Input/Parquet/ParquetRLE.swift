/// Parquet's RLE/bit-packed hybrid (Encodings.md): runs of one repeated value, or groups of 8
/// values packed least-significant bit first, each run after a ULEB128 header. It carries the
/// definition levels of optional columns and the indices of dictionary-encoded values.
enum ParquetRLE {
    /// The first `count` values of the hybrid data in `bytes` at `bitWidth` bits each (0...32).
    static func decode(_ bytes: ArraySlice<UInt8>, bitWidth: Int, count: Int) throws(ParquetError) -> [UInt32] {
        guard (0...32).contains(bitWidth) else { throw ParquetError.malformed("a bit width of \(bitWidth)") }
        var values: [UInt32] = []
        values.reserveCapacity(count)
        var position = bytes.startIndex
        let byteWidth = (bitWidth + 7) / 8
        let mask: UInt64 = bitWidth == 32 ? 0xFFFF_FFFF : (1 << UInt64(bitWidth)) - 1
        while values.count < count {
            var header: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard position < bytes.endIndex else { throw ParquetError.truncated("a page's run-length data") }
                let byte = bytes[position]
                position += 1
                guard shift < 63 else { throw ParquetError.malformed("a run header longer than 9 bytes") }
                header |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            if header & 1 == 1 {
                // Bit-packed: (header >> 1) groups of 8 values.
                let groups = header >> 1
                guard groups <= UInt64(Int32.max) else { throw ParquetError.malformed("a bit-packed run of \(groups) groups") }
                let valuesInRun = Int(groups) * 8
                let byteCount = Int(groups) * bitWidth
                guard byteCount <= bytes.endIndex - position else { throw ParquetError.truncated("a bit-packed run") }
                var bitPosition = 0
                for _ in 0..<min(valuesInRun, count - values.count) {
                    var value: UInt64 = 0
                    var taken = 0
                    while taken < bitWidth {
                        let byte = UInt64(bytes[position + (bitPosition + taken) / 8])
                        let offset = (bitPosition + taken) % 8
                        let take = min(8 - offset, bitWidth - taken)
                        value |= ((byte >> UInt64(offset)) & ((1 << UInt64(take)) - 1)) << UInt64(taken)
                        taken += take
                    }
                    values.append(UInt32(value & mask))
                    bitPosition += bitWidth
                }
                position += byteCount
            } else {
                let repeats = header >> 1
                guard byteWidth <= bytes.endIndex - position else { throw ParquetError.truncated("an RLE run") }
                var value: UInt64 = 0
                for index in 0..<byteWidth { value |= UInt64(bytes[position + index]) << UInt64(8 * index) }
                position += byteWidth
                guard value <= mask else { throw ParquetError.malformed("an RLE value wider than \(bitWidth) bits") }
                guard repeats > 0 else { throw ParquetError.malformed("an empty RLE run") }
                // A run longer than what is left is cut: the values past `count` are not this page's.
                values.append(contentsOf: repeatElement(UInt32(value), count: Int(min(repeats, UInt64(count - values.count)))))
            }
        }
        return values
    }
}
