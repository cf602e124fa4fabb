/// One value of a Parquet column, as a list row uses it.
enum ParquetValue: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case float(Float)
    case double(Double)
    /// BYTE_ARRAY: text, or bytes (kept as they are, decoded as UTF-8 when shown).
    case bytes(ArraySlice<UInt8>)

    /// The value as JSON text: numbers as numbers, bytes as a string, null as `null`. Floats that
    /// JSON cannot hold (NaN, infinities) are `null`.
    var json: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .integer(let value): String(value)
        // Swift's shortest round-trip form (of the Float, for FLOAT), with its `.0`: a reader in
        // Python gets a float, as pyarrow gives one (`0.0`, not `0`).
        case .float(let value): value.isFinite ? value.description : "null"
        case .double(let value): value.isFinite ? value.description : "null"
        case .bytes(let bytes): JSONWriter.string(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The text of a BYTE_ARRAY value; nil for other values.
    var text: String? {
        if case .bytes(let bytes) = self { String(decoding: bytes, as: UTF8.self) } else { nil }
    }
}

/// Reads one column chunk page by page, one value at a time: at most one page and the chunk's
/// dictionary are in memory, so a row group of a million rows streams in bounded memory. A page's
/// PLAIN values are decoded one by one as they are asked for, and a dictionary page's indices are
/// kept as indices: a page of 20,000 numbers is its bytes, not 20,000 decoded values.
///
/// Flat columns only: REQUIRED, or OPTIONAL with definition levels of one bit. Encodings PLAIN,
/// PLAIN_DICTIONARY and RLE_DICTIONARY; physical types BOOLEAN, INT32, INT64, FLOAT, DOUBLE and
/// BYTE_ARRAY. Anything else is refused with what it is.
struct ParquetColumnCursor {
    private let file: ParquetFile
    private let column: ParquetMetadata.Column
    private let chunk: ParquetMetadata.ColumnChunk
    /// The next page's offset, and where the chunk ends.
    private var offset: Int64
    private let end: Int64
    private var dictionary: [ParquetValue]?
    /// The current page: each slot's definition (nil: all present); its values (the non-null
    /// ones), PLAIN in `page` from `plainPosition`, or dictionary `indices`.
    private var present: [UInt32]?
    private var page: [UInt8] = []
    private var plainPosition = 0
    private var indices: [UInt32]?
    private var valueCount = 0
    private var slot = 0
    private var slots = 0
    private var valueIndex = 0
    /// The chunk's values read so far, against `chunk.valueCount`.
    private var slotsRead: Int64 = 0

    init(file: ParquetFile, column: ParquetMetadata.Column, chunk: ParquetMetadata.ColumnChunk) throws(ParquetError) {
        guard chunk.filePath == nil else { throw ParquetError.unsupported("column chunks in other files ('\(chunk.filePath ?? "")')") }
        guard chunk.start >= 4, chunk.compressedSize >= 0, chunk.start + chunk.compressedSize <= file.size - 8 else {
            throw ParquetError.malformed("column '\(column.name)' lies outside the file")
        }
        self.file = file
        self.column = column
        self.chunk = chunk
        offset = chunk.start
        end = chunk.start + chunk.compressedSize
    }

    /// The next value; nil after the chunk's last.
    mutating func next() throws(ParquetError) -> ParquetValue? {
        while slot == slots {
            guard slotsRead < chunk.valueCount else { return nil }
            try readPage()
        }
        defer { slot += 1 }
        if let present, present[slot] == 0 { return .null }
        guard valueIndex < valueCount else { throw ParquetError.malformed("column '\(column.name)': fewer values than its levels say") }
        defer { valueIndex += 1 }
        guard let indices else { return try plainValue(page, at: &plainPosition, index: valueIndex) }
        guard let dictionary, Int(indices[valueIndex]) < dictionary.count else {
            throw ParquetError.malformed("column '\(column.name)': a dictionary index past its end")
        }
        return dictionary[Int(indices[valueIndex])]
    }

    // MARK: - Pages

    private mutating func readPage() throws(ParquetError) {
        guard offset < end else { throw ParquetError.truncated("column '\(column.name)': \(chunk.valueCount - slotsRead) values are missing") }
        let header = try readHeader()
        let bodyStart = offset + Int64(header.headerSize)
        guard Int64(header.compressedSize) <= end - bodyStart else {
            throw ParquetError.malformed("column '\(column.name)': a page runs past its chunk")
        }
        let body = try ParquetFile.read(file.descriptor, at: bodyStart, count: header.compressedSize)
        offset = bodyStart + Int64(header.compressedSize)
        switch header.kind {
        case .dictionary(let count):
            guard dictionary == nil else { throw ParquetError.malformed("column '\(column.name)': two dictionary pages") }
            let plain = try ParquetCodec.decompress(body[...], codec: chunk.codec, size: header.uncompressedSize)
            var position = 0
            var values: [ParquetValue] = []
            values.reserveCapacity(count)
            for index in 0..<count { values.append(try plainValue(plain, at: &position, index: index)) }
            dictionary = values
        case .data(let count, let encoding):
            let page = try ParquetCodec.decompress(body[...], codec: chunk.codec, size: header.uncompressedSize)
            var position = 0
            if column.isOptional {
                guard page.count >= 4 else { throw ParquetError.truncated("column '\(column.name)': a page's levels") }
                let length = Int(page[0]) | Int(page[1]) << 8 | Int(page[2]) << 16 | Int(page[3]) << 24
                guard length <= page.count - 4 else { throw ParquetError.malformed("column '\(column.name)': levels past the page") }
                present = try ParquetRLE.decode(page[4..<4 + length], bitWidth: 1, count: count)
                position = 4 + length
            } else {
                present = nil
            }
            try startPage(slots: count, encoding: encoding, values: page, at: position)
        case .dataV2(let count, let encoding, let definitionBytes, let repetitionBytes, let compressed):
            guard repetitionBytes == 0 else { throw ParquetError.unsupported("column '\(column.name)' has repetition levels") }
            guard definitionBytes <= body.count else { throw ParquetError.malformed("column '\(column.name)': levels past the page") }
            present = column.isOptional ? try ParquetRLE.decode(body[0..<definitionBytes], bitWidth: 1, count: count) : nil
            let rest = body[definitionBytes...]
            let values = compressed
                ? try ParquetCodec.decompress(rest, codec: chunk.codec, size: header.uncompressedSize - definitionBytes)
                : Array(rest)
            try startPage(slots: count, encoding: encoding, values: values, at: 0)
        case .other:
            return
        }
    }

    /// The page header at `offset`: read in growing pieces, since its length is known only once it is decoded.
    private func readHeader() throws(ParquetError) -> ParquetPageHeader {
        var length = 256
        while true {
            let available = Int(min(Int64(length), end - offset))
            let bytes = try ParquetFile.read(file.descriptor, at: offset, count: available)
            do {
                return try ParquetPageHeader(bytes)
            } catch .truncated(let what) {
                // Statistics of long strings make long headers; past 16 MiB, the header lies.
                guard available == length, length < 16 << 20 else { throw ParquetError.truncated("column '\(column.name)': \(what)") }
                length *= 16
            }
        }
    }

    private mutating func startPage(slots count: Int, encoding: Int32, values bytes: [UInt8], at start: Int) throws(ParquetError) {
        valueCount = present.map { levels in levels.reduce(0) { $0 + Int($1) } } ?? count
        switch encoding {
        case 0:
            page = bytes
            plainPosition = start
            indices = nil
        case 2, 8:
            guard dictionary != nil else { throw ParquetError.malformed("column '\(column.name)': dictionary indices without a dictionary") }
            guard start < bytes.count || valueCount == 0 else { throw ParquetError.truncated("column '\(column.name)': a page's indices") }
            let width = valueCount == 0 ? 0 : Int(bytes[start])
            indices = valueCount == 0 ? [] : try ParquetRLE.decode(bytes[(start + 1)...], bitWidth: width, count: valueCount)
            page = []
        default:
            let names: [Int32: String] = [3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED", 6: "DELTA_LENGTH_BYTE_ARRAY",
                                          7: "DELTA_BYTE_ARRAY", 9: "BYTE_STREAM_SPLIT"]
            throw ParquetError.unsupported("column '\(column.name)' is \(names[encoding] ?? "encoding \(encoding)")-encoded "
                + "(imgfetch reads PLAIN and dictionary encodings)")
        }
        slot = 0
        slots = count
        valueIndex = 0
        slotsRead += Int64(count)
        guard slotsRead <= chunk.valueCount else { throw ParquetError.malformed("column '\(column.name)': more values than its chunk says") }
    }

    /// The PLAIN value number `index` of the page, which starts at `position` for all but
    /// booleans (bit-packed, found by index from the values' start): decoded and passed.
    private func plainValue(_ bytes: [UInt8], at position: inout Int, index: Int) throws(ParquetError) -> ParquetValue {
        func take(_ size: Int) throws(ParquetError) -> Int {
            guard size <= bytes.count - position else { throw ParquetError.truncated("column '\(column.name)': a page's values") }
            defer { position += size }
            return position
        }
        func little(_ start: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for offset in 0..<size { value |= UInt64(bytes[start + offset]) << UInt64(8 * offset) }
            return value
        }
        switch column.type {
        case 0:
            guard index / 8 < bytes.count - position else { throw ParquetError.truncated("column '\(column.name)': a page's values") }
            return .bool(bytes[position + index / 8] >> UInt8(index % 8) & 1 == 1)
        case 1: return .integer(Int64(Int32(bitPattern: UInt32(little(try take(4), 4)))))
        case 2: return .integer(Int64(bitPattern: little(try take(8), 8)))
        case 4: return .float(Float(bitPattern: UInt32(little(try take(4), 4))))
        case 5: return .double(Double(bitPattern: little(try take(8), 8)))
        case 6:
            let length = Int(little(try take(4), 4))
            let start = try take(length)
            return .bytes(bytes[start..<start + length])
        default:
            throw ParquetError.unsupported("column '\(column.name)' is of type \(ParquetMetadata.typeName(column.type))")
        }
    }
}
