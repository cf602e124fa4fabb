import Glibc

/// An image's EXIF as img2dataset's `--extract_exif` records it (`--extract-exif`): a JSON object
/// of printable values by tag key (`ExifTags`), `{"Image Make": "Canon", "EXIF ExposureTime":
/// "1/125", "Image XResolution": "72"}`. Read from the TIFF block of a JPEG's APP1 segment, a PNG's
/// `eXIf` chunk, a WebP's `EXIF` chunk, or a TIFF file's own directories; an image without one
/// gives `{}`. Every offset is bounds-checked and every amount capped, so a hostile block costs at
/// most `maxBlock` bytes read, `maxEntries` directory entries looked at in `maxDirectories`
/// directories, and `maxOutput` bytes of printed values.
enum ExifReader {
    enum Directory {
        case image, thumbnail, exif, gps, interoperability

        var keyPrefix: String {
            switch self {
            case .image: "Image"
            case .thumbnail: "Thumbnail"
            case .exif: "EXIF"
            case .gps: "GPS"
            case .interoperability: "Interoperability"
            }
        }
    }

    /// Most bytes of a TIFF block read (a JPEG segment holds at most 64 KiB).
    static let maxBlock = 1 << 20
    /// Most tags printed, over all directories.
    static let maxTags = 1000
    /// Most directory entries looked at, printed or not, over all directories.
    static let maxEntries = 4096
    /// Most directories read (IFD0, IFD1, EXIF, GPS, Interoperability: five in a camera's file).
    static let maxDirectories = 8
    /// Most characters of one printed value.
    static let maxValue = 4096
    /// Most characters of printed values over all tags: past it, no more tags are printed.
    static let maxOutput = 64 << 10

    /// The EXIF of the image in `source` as a JSON object's text.
    static func json(_ source: ImageSource, format: ImageFormat) -> String {
        let reader = Bytes(source)
        defer { reader.close() }
        var json = JSONWriter()
        if let block = tiffBlock(reader, format: format) {
            for (key, value) in tags(in: block) { json.add(key, value) }
        }
        return json.object
    }

    // MARK: - Finding the block

    private static func tiffBlock(_ reader: Bytes, format: ImageFormat) -> [UInt8]? {
        switch format {
        case .jpeg: return jpegBlock(reader)
        case .png: return pngBlock(reader)
        case .webp: return webpBlock(reader)
        case .tiff: return reader.read(at: 0, count: maxBlock)
        default: return nil
        }
    }

    /// The APP1 segment that starts `Exif\0\0`, among the segments before the scan.
    private static func jpegBlock(_ reader: Bytes) -> [UInt8]? {
        var offset = 2
        for _ in 0..<256 {
            guard let marker = reader.read(at: offset, count: 4), marker.count == 4, marker[0] == 0xFF else { return nil }
            if marker[1] == 0xFF { offset += 1; continue }
            if marker[1] == 0xDA || marker[1] == 0xD9 { return nil }
            let length = Int(marker[2]) << 8 | Int(marker[3])
            guard length >= 2 else { return nil }
            if marker[1] == 0xE1, length >= 8, let data = reader.read(at: offset + 4, count: length - 2),
               data.starts(with: Array("Exif".utf8) + [0, 0]) {
                return Array(data.dropFirst(6))
            }
            offset += 2 + length
        }
        return nil
    }

    /// The `eXIf` chunk, among the chunks before `IEND`.
    private static func pngBlock(_ reader: Bytes) -> [UInt8]? {
        var offset = 8
        for _ in 0..<100_000 {
            guard let header = reader.read(at: offset, count: 8), header.count == 8 else { return nil }
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if type == "eXIf" { return reader.read(at: offset + 8, count: min(length, maxBlock)) }
            if type == "IEND" { return nil }
            offset += 12 + length
        }
        return nil
    }

    /// The RIFF chunk `EXIF` of a WebP file (with or without an `Exif\0\0` start).
    private static func webpBlock(_ reader: Bytes) -> [UInt8]? {
        var offset = 12
        for _ in 0..<10_000 {
            guard let header = reader.read(at: offset, count: 8), header.count == 8 else { return nil }
            let size = Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16 | Int(header[7]) << 24
            if String(decoding: header[0..<4], as: UTF8.self) == "EXIF",
               let data = reader.read(at: offset + 8, count: min(size, maxBlock)) {
                return data.starts(with: Array("Exif".utf8) + [0, 0]) ? Array(data.dropFirst(6)) : data
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    // MARK: - Reading the directories

    /// The printable tags of a TIFF block, in the order exifread gives them: IFD0 (and GPS),
    /// IFD1, then EXIF (and Interoperability).
    static func tags(in block: [UInt8]) -> [(String, String)] {
        guard block.count >= 8 else { return [] }
        let little: Bool
        switch (block[0], block[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return []
        }
        var parser = Parser(block: block, little: little)
        guard parser.u16(2) == 42, let first = parser.u32(4) else { return [] }
        var exif: Int?
        let next = parser.directory(at: Int(first), .image, found: &exif)
        if let next, next != 0 {
            var ignored: Int?
            _ = parser.directory(at: next, .thumbnail, found: &ignored)
        }
        if let exif {
            var ignored: Int?
            _ = parser.directory(at: exif, .exif, found: &ignored)
        }
        return parser.tags
    }

    private struct Parser {
        let block: [UInt8]
        let little: Bool
        var tags: [(String, String)] = []
        var visited: Set<Int> = []
        /// Entries looked at and characters printed so far (`maxEntries`, `maxOutput`).
        var entries = 0
        var printed = 0

        init(block: [UInt8], little: Bool) {
            self.block = block
            self.little = little
        }

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= block.count else { return nil }
            return little ? Int(block[at]) | Int(block[at + 1]) << 8 : Int(block[at]) << 8 | Int(block[at + 1])
        }

        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }

        /// Reads the directory at `offset` into `tags`, following GPS and Interoperability at once
        /// and noting the EXIF directory's offset in `exif`; returns the next directory's offset.
        mutating func directory(at offset: Int, _ directory: Directory, found exif: inout Int?) -> Int? {
            guard visited.count < ExifReader.maxDirectories, visited.insert(offset).inserted, let count = u16(offset) else { return nil }
            for index in 0..<count {
                entries += 1
                guard tags.count < ExifReader.maxTags, entries <= ExifReader.maxEntries, printed < ExifReader.maxOutput else { return nil }
                let entry = offset + 2 + index * 12
                guard let tagNumber = u16(entry), let type = u16(entry + 2), let valueCount = u32(entry + 4) else { return nil }
                let tag = UInt16(truncatingIfNeeded: tagNumber)
                guard !ExifTags.ignored.contains(tag), let size = Self.typeSize(type) else { continue }
                let total = size * valueCount
                guard valueCount < 1 << 24, total < ExifReader.maxBlock else { continue }
                let valueOffset = total <= 4 ? entry + 8 : (u32(entry + 8) ?? -1)
                guard valueOffset >= 0, valueOffset + total <= block.count else { continue }
                let name = directory.keyPrefix + " " + ExifTags.name(tag, in: directory)
                let printed = printable(tag, type: type, count: valueCount, at: valueOffset, directory: directory)
                let value = String(printed.prefix(ExifReader.maxValue))
                self.printed += name.utf8.count + value.utf8.count
                tags.append((name, value))
                if let sub = ExifTags.subdirectories[tag], directory == .image || directory == .exif,
                   let target = u32(valueOffset) {
                    if sub == .exif, directory == .image {
                        exif = target
                    } else if sub != .exif {
                        var ignored: Int?
                        _ = self.directory(at: target, sub, found: &ignored)
                    }
                }
            }
            return u32(offset + 2 + count * 12)
        }

        /// Bytes per value of a TIFF field type; nil for a type that is not one.
        static func typeSize(_ type: Int) -> Int? {
            switch type {
            case 1, 2, 6, 7: 1
            case 3, 8: 2
            case 4, 9, 11: 4
            case 5, 10, 12: 8
            default: nil
            }
        }

        /// A value as exifread prints it: text up to its NUL, one number, a reduced fraction
        /// (`1/125`, `72`), a coded value's meaning, or a list (`[1, 2, 3]`, the first 20 and `...`
        /// when longer than 50).
        func printable(_ tag: UInt16, type: Int, count: Int, at offset: Int, directory: Directory) -> String {
            let bytes = block[offset..<offset + count * (Self.typeSize(type) ?? 1)]
            if type == 2 {
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if type == 7, ExifTags.textBytes.contains(tag), directory == .exif || directory == .interoperability {
                return String(decoding: bytes.filter { $0 >= 32 && $0 < 127 }, as: UTF8.self).trimmingWhitespace
            }
            var values: [String] = []
            var codes: [Int64] = []
            let size = Self.typeSize(type) ?? 1
            for index in 0..<min(count, 51) {
                let at = offset + index * size
                var code: Int64?
                switch type {
                case 1, 7: code = Int64(block[at])
                case 6: code = Int64(Int8(bitPattern: block[at]))
                case 3: code = Int64(u16(at) ?? 0)
                case 8: code = Int64(Int16(truncatingIfNeeded: u16(at) ?? 0))
                case 4: code = Int64(u32(at) ?? 0)
                case 9: code = Int64(Int32(truncatingIfNeeded: u32(at) ?? 0))
                case 5, 10:
                    var numerator = Int64(u32(at) ?? 0), denominator = Int64(u32(at + 4) ?? 0)
                    if type == 10 {
                        numerator = Int64(Int32(truncatingIfNeeded: numerator))
                        denominator = Int64(Int32(truncatingIfNeeded: denominator))
                    }
                    values.append(Self.fraction(numerator, denominator))
                case 11: values.append(String(Float(bitPattern: UInt32(truncatingIfNeeded: u32(at) ?? 0))))
                default:
                    let high = UInt64(truncatingIfNeeded: u32(at) ?? 0), low = UInt64(truncatingIfNeeded: u32(at + 4) ?? 0)
                    values.append(String(Double(bitPattern: little ? low << 32 | high : high << 32 | low)))
                }
                if let code {
                    codes.append(code)
                    values.append(String(code))
                }
            }
            if !codes.isEmpty, codes.allSatisfy({ ExifTags.meaning(tag, $0) != nil }),
               directory != .gps, directory != .interoperability {
                return codes.map { ExifTags.meaning(tag, $0) ?? "" }.joined()
            }
            if count == 1, let only = values.first { return only }
            if count > 50 { return "[" + values.prefix(20).joined(separator: ", ") + ", ... ]" }
            return "[" + values.joined(separator: ", ") + "]"
        }

        /// `n/d` in lowest terms, `n` when `d` is 1, as Python's `Fraction` prints.
        static func fraction(_ numerator: Int64, _ denominator: Int64) -> String {
            guard denominator != 0 else { return "\(numerator)/0" }
            var a = abs(numerator), b = abs(denominator)
            while b != 0 { (a, b) = (b, a % b) }
            let divisor = max(a, 1)
            var n = numerator / divisor, d = denominator / divisor
            if d < 0 { n = -n; d = -d }
            return d == 1 ? "\(n)" : "\(n)/\(d)"
        }
    }

    /// Reads parts of an image wherever it is: in memory, or in a file (by `pread`, leaving the
    /// descriptor's offset alone).
    private final class Bytes {
        private let memory: UnsafeRawBufferPointer?
        private let fd: Int32
        private let ownsDescriptor: Bool

        init(_ source: ImageSource) {
            switch source {
            case .memory(let bytes):
                memory = bytes
                fd = -1
                ownsDescriptor = false
            case .descriptor(let descriptor):
                memory = nil
                fd = descriptor
                ownsDescriptor = false
            case .file(let path):
                memory = nil
                fd = open(path, O_RDONLY | O_CLOEXEC)
                ownsDescriptor = true
            }
        }

        func close() {
            if ownsDescriptor && fd >= 0 { _ = Glibc.close(fd) }
        }

        /// Up to `count` bytes from `offset` (fewer at the end); nil when there are none.
        func read(at offset: Int, count: Int) -> [UInt8]? {
            guard offset >= 0, count > 0 else { return nil }
            if let memory {
                guard offset < memory.count else { return nil }
                return Array(memory[offset..<min(memory.count, offset + count)])
            }
            guard fd >= 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { FileDescriptorIO.read(fd, into: $0, at: offset) }
            guard got > 0 else { return nil }
            bytes.removeLast(count - got)
            return bytes
        }
    }
}
