/// Reads Apache Thrift's compact protocol, the encoding of Parquet's metadata (the footer's
/// `FileMetaData` and every page's header), from a byte buffer.
///
/// Bounds-checked throughout: a truncated or malformed buffer throws `ParquetError`, never
/// traps, and nesting is limited so a hostile file cannot recurse without end. Fields a reader
/// does not ask for are skipped by their type, as Thrift requires of unknown fields.
/// (apache/thrift `doc/specs/thrift-compact-protocol.md`)
struct ThriftCompactReader {
    /// A field's or an element's type, as the compact protocol numbers it.
    enum FieldType: UInt8 {
        case stop = 0, boolTrue = 1, boolFalse = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, double = 7
        case binary = 8, list = 9, set = 10, map = 11, structure = 12
    }

    private let bytes: [UInt8]
    private(set) var position: Int
    private var depth = 0

    /// Structs and lists nested deeper than this are refused: Parquet's own go a few levels deep.
    static let maxDepth = 32

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    /// Reads one struct: `field` is called with each field's id and type and must read the field's
    /// value, or return false to have it skipped. Ends at the struct's stop byte.
    mutating func readStruct(_ field: (inout ThriftCompactReader, Int16, FieldType) throws(ParquetError) -> Bool) throws(ParquetError) {
        try enter()
        defer { depth -= 1 }
        var lastID: Int16 = 0
        while true {
            let header = try readByte()
            if header == 0 { return }
            guard let type = FieldType(rawValue: header & 0x0F) else { throw malformed("field type \(header & 0x0F)") }
            let delta = Int16(header >> 4)
            let id = delta == 0 ? try readI16() : lastID &+ delta
            lastID = id
            if try !field(&self, id, type) { try skip(type) }
        }
    }

    /// A list's (or a set's) element type and count; the elements follow.
    mutating func readListHeader() throws(ParquetError) -> (elementType: FieldType, count: Int) {
        let header = try readByte()
        guard let type = FieldType(rawValue: header & 0x0F) else { throw malformed("list element type \(header & 0x0F)") }
        let shortCount = Int(header >> 4)
        let count = shortCount == 15 ? try readSize() : shortCount
        // Every element takes a byte at least (a bool, a varint): a count past the bytes left lies.
        guard count <= bytes.count - position else { throw malformed("a list of \(count) elements in \(bytes.count - position) bytes") }
        return (type, count)
    }

    /// A list of structs, each read by `element`.
    mutating func readList<Element>(_ element: (inout ThriftCompactReader) throws(ParquetError) -> Element) throws(ParquetError) -> [Element] {
        let (type, count) = try readListHeader()
        try enter()
        defer { depth -= 1 }
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count {
            if type == .structure || type == .binary || type == .i32 || type == .i64 {
                elements.append(try element(&self))
            } else {
                throw malformed("a list of \(type)")
            }
        }
        return elements
    }

    mutating func readI16() throws(ParquetError) -> Int16 {
        let value = try readZigzag()
        guard let narrow = Int16(exactly: value) else { throw malformed("i16 out of range") }
        return narrow
    }

    mutating func readI32() throws(ParquetError) -> Int32 {
        let value = try readZigzag()
        guard let narrow = Int32(exactly: value) else { throw malformed("i32 out of range") }
        return narrow
    }

    mutating func readI64() throws(ParquetError) -> Int64 {
        try readZigzag()
    }

    /// A binary or string field's bytes.
    mutating func readBinary() throws(ParquetError) -> ArraySlice<UInt8> {
        let length = try readSize()
        guard length <= bytes.count - position else { throw ParquetError.truncated("a field of \(length) bytes") }
        defer { position += length }
        return bytes[position..<position + length]
    }

    mutating func readString() throws(ParquetError) -> String {
        String(decoding: try readBinary(), as: UTF8.self)
    }

    /// A bool field's value, which the compact protocol keeps in the field's type.
    static func bool(_ type: FieldType) throws(ParquetError) -> Bool {
        switch type {
        case .boolTrue: true
        case .boolFalse: false
        default: throw ParquetError.malformed("a \(type) where a bool was expected")
        }
    }

    /// Skips a value of `type`, nested ones included.
    mutating func skip(_ type: FieldType) throws(ParquetError) {
        switch type {
        case .stop: throw malformed("a stop where a value was expected")
        case .boolTrue, .boolFalse: return
        case .byte: _ = try readByte()
        case .i16, .i32, .i64: _ = try readVarint()
        case .double: try advance(8)
        case .binary: _ = try readBinary()
        case .list, .set:
            let (elementType, count) = try readListHeader()
            try enter()
            defer { depth -= 1 }
            for _ in 0..<count {
                // Bools in a list take a byte each.
                if elementType == .boolTrue || elementType == .boolFalse { try advance(1) } else { try skip(elementType) }
            }
        case .map:
            let count = try readSize()
            guard count > 0 else { return }
            let types = try readByte()
            guard let key = FieldType(rawValue: types >> 4), let value = FieldType(rawValue: types & 0x0F) else {
                throw malformed("map types \(types)")
            }
            guard count <= bytes.count - position else { throw malformed("a map of \(count) entries") }
            try enter()
            defer { depth -= 1 }
            for _ in 0..<count {
                try skip(key)
                try skip(value)
            }
        case .structure:
            try readStruct { _, _, _ in false }
        }
    }

    // MARK: - Varints

    /// An unsigned LEB128 varint of at most 10 bytes.
    mutating func readVarint() throws(ParquetError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw malformed("a varint longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    private mutating func readZigzag() throws(ParquetError) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A varint that counts something: it must fit an `Int` and not be negative.
    private mutating func readSize() throws(ParquetError) -> Int {
        let raw = try readVarint()
        guard raw <= UInt64(Int32.max) else { throw malformed("a size of \(raw)") }
        return Int(raw)
    }

    private mutating func readByte() throws(ParquetError) -> UInt8 {
        guard position < bytes.count else { throw ParquetError.truncated("metadata") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func advance(_ count: Int) throws(ParquetError) {
        guard count <= bytes.count - position else { throw ParquetError.truncated("metadata") }
        position += count
    }

    private mutating func enter() throws(ParquetError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw malformed("nested more than \(Self.maxDepth) levels deep") }
    }

    private func malformed(_ what: String) -> ParquetError {
        .malformed("\(what) at byte \(position) of the metadata")
    }
}
