import CDecompress

/// A page's header (`PageHeader`, parquet-format's `parquet.thrift`): what kind of page, its sizes,
/// and what its kind's header says of its values.
struct ParquetPageHeader: Equatable {
    enum Kind: Equatable {
        /// DATA_PAGE: levels and values compressed together, each level block with a 4-byte length.
        case data(valueCount: Int, encoding: Int32)
        /// DATA_PAGE_V2: uncompressed levels first, then the values, compressed when `compressed`.
        case dataV2(valueCount: Int, encoding: Int32, definitionBytes: Int, repetitionBytes: Int, compressed: Bool)
        /// DICTIONARY_PAGE: PLAIN values that the data pages' indices point into.
        case dictionary(valueCount: Int)
        /// INDEX_PAGE and kinds unknown to this reader: skipped.
        case other
    }

    var kind: Kind
    var uncompressedSize: Int
    var compressedSize: Int
    /// The header's own length: the page's bytes follow it.
    var headerSize: Int

    /// The longest page read whole: pyarrow writes pages of 1 MiB, dictionaries of 1 MiB.
    static let maxPageBytes = 64 << 20

    /// Decodes the header at the start of `bytes`.
    init(_ bytes: [UInt8]) throws(ParquetError) {
        var reader = ThriftCompactReader(bytes)
        var type: Int32 = -1
        var uncompressed: Int32 = -1
        var compressed: Int32 = -1
        var kind = Kind.other
        try reader.readStruct { reader, id, fieldType throws(ParquetError) in
            switch (id, fieldType) {
            case (1, .i32): type = try reader.readI32()
            case (2, .i32): uncompressed = try reader.readI32()
            case (3, .i32): compressed = try reader.readI32()
            case (5, .structure):
                var count: Int32 = -1, encoding: Int32 = -1
                try reader.readStruct { reader, id, fieldType throws(ParquetError) in
                    switch (id, fieldType) {
                    case (1, .i32): count = try reader.readI32()
                    case (2, .i32): encoding = try reader.readI32()
                    default: return false
                    }
                    return true
                }
                kind = .data(valueCount: Int(max(count, -1)), encoding: encoding)
            case (7, .structure):
                var count: Int32 = -1
                try reader.readStruct { reader, id, fieldType throws(ParquetError) in
                    guard id == 1, fieldType == .i32 else { return false }
                    count = try reader.readI32()
                    return true
                }
                kind = .dictionary(valueCount: Int(count))
            case (8, .structure):
                var count: Int32 = -1, encoding: Int32 = -1, definition: Int32 = -1, repetition: Int32 = 0
                var isCompressed = true
                try reader.readStruct { reader, id, fieldType throws(ParquetError) in
                    switch (id, fieldType) {
                    case (1, .i32): count = try reader.readI32()
                    case (4, .i32): encoding = try reader.readI32()
                    case (5, .i32): definition = try reader.readI32()
                    case (6, .i32): repetition = try reader.readI32()
                    case (7, _): isCompressed = try ThriftCompactReader.bool(fieldType)
                    default: return false
                    }
                    return true
                }
                kind = .dataV2(valueCount: Int(count), encoding: encoding, definitionBytes: Int(definition),
                               repetitionBytes: Int(repetition), compressed: isCompressed)
            default: return false
            }
            return true
        }
        guard uncompressed >= 0, compressed >= 0 else { throw ParquetError.malformed("a page header without its sizes") }
        guard Int(uncompressed) <= Self.maxPageBytes, Int(compressed) <= Self.maxPageBytes else {
            throw ParquetError.unsupported("a page of \(max(uncompressed, compressed) >> 20) MiB (over \(Self.maxPageBytes >> 20) MiB)")
        }
        switch kind {
        case .data(let count, _) where count < 0, .dictionary(let count) where count < 0:
            throw ParquetError.malformed("a page header without its value count (page type \(type))")
        case .dataV2(let count, _, let definition, let repetition, _) where count < 0 || definition < 0 || repetition < 0:
            throw ParquetError.malformed("a v2 page header without its counts")
        default: break
        }
        if case .other = kind, [0, 2, 3].contains(type) { throw ParquetError.malformed("a page of type \(type) without its header") }
        self.kind = kind
        uncompressedSize = Int(uncompressed)
        compressedSize = Int(compressed)
        headerSize = reader.position
    }
}

/// Parquet's codecs (`CompressionCodec`) that imgfetch reads: UNCOMPRESSED, SNAPPY, GZIP, ZSTD.
enum ParquetCodec {
    static func decompress(_ input: ArraySlice<UInt8>, codec: Int32, size: Int) throws(ParquetError) -> [UInt8] {
        if codec == 0 {
            guard input.count == size else { throw ParquetError.malformed("an uncompressed page of \(input.count) bytes, not \(size)") }
            return Array(input)
        }
        let call: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<CChar>?, Int) -> Int32
        switch codec {
        case 1: call = CDecompress_snappy
        case 2: call = CDecompress_gzip
        case 6: call = CDecompress_zstd
        default:
            let names: [Int32: String] = [3: "LZO", 4: "Brotli", 5: "LZ4 (Hadoop)", 7: "LZ4_RAW"]
            throw ParquetError.unsupported("\(names[codec] ?? "codec \(codec)") compression (imgfetch reads Snappy, Zstd, gzip and none)")
        }
        guard size > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: size)
        var message = [CChar](repeating: 0, count: 256)
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                call(source.baseAddress, source.count, target.baseAddress, target.count, &message, message.count)
            }
        }
        guard status == 0 else {
            throw ParquetError.malformed(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return output
    }
}
