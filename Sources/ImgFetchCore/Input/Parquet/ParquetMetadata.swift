/// The parts of a Parquet file's footer (`FileMetaData`, parquet-format's `parquet.thrift`) that a
/// reader of flat tables needs: the schema's columns, the row groups and where each column chunk
/// lies. Everything else in the footer is skipped.
struct ParquetMetadata: Equatable {
    /// A leaf column of the schema.
    struct Column: Equatable {
        var name: String
        /// The physical type (`ParquetPhysicalType`).
        var type: Int32
        /// OPTIONAL: a value may be null (its definition level says so).
        var isOptional: Bool
        /// A BYTE_ARRAY annotated as text (converted type UTF8, or the STRING logical type).
        var isText: Bool
    }

    /// One column's data within a row group.
    struct ColumnChunk: Equatable {
        var type: Int32
        var path: [String]
        var codec: Int32
        var encodings: [Int32]
        var valueCount: Int64
        var compressedSize: Int64
        var dataPageOffset: Int64
        var dictionaryPageOffset: Int64?
        /// A chunk kept in another file (`file_path`), which imgfetch does not follow.
        var filePath: String?

        /// Where the chunk's first page starts: its dictionary page when it has one.
        var start: Int64 {
            if let dictionary = dictionaryPageOffset, dictionary > 0, dictionary < dataPageOffset { dictionary } else { dataPageOffset }
        }
    }

    struct RowGroup: Equatable {
        var rowCount: Int64
        var columns: [ColumnChunk]
    }

    var rowCount: Int64
    var columns: [Column]
    var rowGroups: [RowGroup]

    /// The physical types imgfetch reads: BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY.
    static let readableTypes: Set<Int32> = [0, 1, 2, 4, 5, 6]

    /// A physical type's name in an error.
    static func typeName(_ type: Int32) -> String {
        [0: "BOOLEAN", 1: "INT32", 2: "INT64", 3: "INT96", 4: "FLOAT", 5: "DOUBLE", 6: "BYTE_ARRAY",
         7: "FIXED_LEN_BYTE_ARRAY"][type] ?? "\(type)"
    }
}

extension ParquetMetadata {
    /// Decodes `FileMetaData` from the footer's bytes. A nested schema (a group column, a repeated
    /// field) is refused: lists of URLs are flat tables.
    init(footer bytes: [UInt8]) throws(ParquetError) {
        var reader = ThriftCompactReader(bytes)
        var schema: [SchemaElement] = []
        var rowCount: Int64 = 0
        var rowGroups: [RowGroup] = []
        try reader.readStruct { reader, id, type throws(ParquetError) in
            switch (id, type) {
            case (2, .list): schema = try reader.readList { reader throws(ParquetError) in try SchemaElement(&reader) }
            case (3, .i64): rowCount = try reader.readI64()
            case (4, .list): rowGroups = try reader.readList { reader throws(ParquetError) in try RowGroup(&reader) }
            default: return false
            }
            return true
        }
        guard let root = schema.first else { throw ParquetError.malformed("the footer has no schema") }
        let leaves = schema.dropFirst()
        guard leaves.count == Int(root.childCount ?? 0), leaves.allSatisfy({ $0.childCount ?? 0 == 0 && $0.type != nil }) else {
            throw ParquetError.unsupported("nested columns (groups, lists or maps); only flat tables are read")
        }
        if let repeated = leaves.first(where: { $0.repetition == 2 }) {
            throw ParquetError.unsupported("column '\(repeated.name)' is repeated (a list); only flat tables are read")
        }
        let columns = leaves.map { element in
            Column(name: element.name, type: element.type ?? 0, isOptional: element.repetition == 1, isText: element.isText)
        }
        for group in rowGroups where group.columns.count != columns.count {
            throw ParquetError.malformed("a row group has \(group.columns.count) columns, the schema \(columns.count)")
        }
        guard rowCount >= 0, rowGroups.allSatisfy({ $0.rowCount >= 0 }) else { throw ParquetError.malformed("a negative row count") }
        self.init(rowCount: rowCount, columns: columns, rowGroups: rowGroups)
    }
}

/// One `SchemaElement`: the root (with its children's count) or a column.
private struct SchemaElement {
    var type: Int32?
    var repetition: Int32?
    var name = ""
    var childCount: Int32?
    var convertedType: Int32?
    var isStringLogicalType = false

    /// UTF8 (converted type 0) or the STRING logical type (union member 1).
    var isText: Bool { convertedType == 0 || isStringLogicalType }

    init(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        var element = SchemaElement()
        try reader.readStruct { reader, id, type throws(ParquetError) in
            switch (id, type) {
            case (1, .i32): element.type = try reader.readI32()
            case (3, .i32): element.repetition = try reader.readI32()
            case (4, .binary): element.name = try reader.readString()
            case (5, .i32): element.childCount = try reader.readI32()
            case (6, .i32): element.convertedType = try reader.readI32()
            case (10, .structure):
                try reader.readStruct { reader, member, type throws(ParquetError) in
                    if member == 1 && type == .structure { element.isStringLogicalType = true }
                    return false
                }
            default: return false
            }
            return true
        }
        self = element
    }

    private init() {}
}

private extension ParquetMetadata.RowGroup {
    init(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        var group = Self(rowCount: 0, columns: [])
        try reader.readStruct { reader, id, type throws(ParquetError) in
            switch (id, type) {
            case (1, .list): group.columns = try reader.readList { reader throws(ParquetError) in try ParquetMetadata.ColumnChunk(&reader) }
            case (3, .i64): group.rowCount = try reader.readI64()
            default: return false
            }
            return true
        }
        self = group
    }
}

private extension ParquetMetadata.ColumnChunk {
    init(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        var chunk = Self(type: -1, path: [], codec: 0, encodings: [], valueCount: 0, compressedSize: 0, dataPageOffset: -1)
        var hasMetadata = false
        try reader.readStruct { reader, id, type throws(ParquetError) in
            switch (id, type) {
            case (1, .binary): chunk.filePath = try reader.readString()
            case (3, .structure):
                hasMetadata = true
                try reader.readStruct { reader, id, type throws(ParquetError) in
                    switch (id, type) {
                    case (1, .i32): chunk.type = try reader.readI32()
                    case (2, .list): chunk.encodings = try reader.readList { reader throws(ParquetError) in try reader.readI32() }
                    case (3, .list): chunk.path = try reader.readList { reader throws(ParquetError) in try reader.readString() }
                    case (4, .i32): chunk.codec = try reader.readI32()
                    case (5, .i64): chunk.valueCount = try reader.readI64()
                    case (7, .i64): chunk.compressedSize = try reader.readI64()
                    case (9, .i64): chunk.dataPageOffset = try reader.readI64()
                    case (11, .i64): chunk.dictionaryPageOffset = try reader.readI64()
                    default: return false
                    }
                    return true
                }
            default: return false
            }
            return true
        }
        guard hasMetadata, chunk.type >= 0, chunk.dataPageOffset >= 0, chunk.compressedSize >= 0, chunk.valueCount >= 0 else {
            throw ParquetError.malformed("a column chunk without its metadata")
        }
        self = chunk
    }
}
