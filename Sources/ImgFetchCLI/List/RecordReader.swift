import Glibc
import ImgFetchCore

/// Reads a table as a stream of records: CSV as RFC 4180 has it (quoted fields with `""` for a
/// quote, commas and line breaks inside quotes, CRLF or LF), TSV (a tab between fields, no
/// quoting, one record per line), or whole lines (JSON Lines). The input is read in chunks; a record never grows memory past
/// `maxRecordBytes`.
struct RecordReader {
    enum Dialect: Sendable {
        case csv
        case tsv
        /// One record per line, the whole line its one field (JSON Lines).
        case lines
    }

    /// One record, numbered by the line it starts on.
    enum Record: Equatable {
        case fields([String], line: Int)
        /// The record cannot be used; reading goes on after it.
        case invalid(reason: String, line: Int)
        /// Reading failed; no records follow.
        case readError(String, line: Int)
    }

    /// Longest record accepted: far beyond any row of URLs and captions, and a bound on what an
    /// unclosed quote can swallow before it is reported.
    static let maxRecordBytes = 1 << 20
    private static let chunkSize = 64 * 1024

    private let descriptor: Int32
    private let dialect: Dialect
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var failed = false
    /// The line the next byte is on.
    private var line = 1
    private var firstChunk = true

    init(descriptor: Int32, dialect: Dialect) {
        self.descriptor = descriptor
        self.dialect = dialect
    }

    mutating func next() -> Record? {
        guard !failed else { return nil }
        let startLine = line
        var fields: [String] = []
        var field: [UInt8] = []
        var size = 0
        var quoted = false      // inside a quoted field
        var afterQuote = false  // a quoted field's closing quote was read
        var fieldStart = true
        var stray = false       // a character after a closing quote
        var consumedAny = false
        while true {
            guard let byte = nextByte() else {
                if let error = readError {
                    failed = true
                    return .readError(error, line: line)
                }
                if !consumedAny { return nil }
                if quoted { return .invalid(reason: "a quoted field is not closed before the end of the list", line: startLine) }
                fields.append(Self.decode(field, droppingCR: !afterQuote))
                return stray ? .invalid(reason: "a character follows a closing quote", line: startLine) : .fields(fields, line: startLine)
            }
            consumedAny = true
            size += 1
            if byte == UInt8(ascii: "\n") { line += 1 }
            if size > Self.maxRecordBytes {
                skipRestOfLine(wasNewline: byte == UInt8(ascii: "\n"))
                return .invalid(reason: "record longer than \(Self.maxRecordBytes >> 20) MiB (an unclosed quote?); "
                    + "reading goes on at the next line", line: startLine)
            }
            if dialect != .csv {
                switch byte {
                case UInt8(ascii: "\t") where dialect == .tsv:
                    fields.append(Self.decode(field))
                    field.removeAll(keepingCapacity: true)
                case UInt8(ascii: "\n"):
                    fields.append(Self.decode(field, droppingCR: true))
                    return .fields(fields, line: startLine)
                default:
                    field.append(byte)
                }
                continue
            }
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if peekByte() == UInt8(ascii: "\"") {
                        _ = nextByte()
                        size += 1
                        field.append(byte)
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                fields.append(Self.decode(field))
                field.removeAll(keepingCapacity: true)
                fieldStart = true
                afterQuote = false
            case UInt8(ascii: "\n"):
                fields.append(Self.decode(field, droppingCR: !afterQuote))
                return stray ? .invalid(reason: "a character follows a closing quote", line: startLine) : .fields(fields, line: startLine)
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                fieldStart = false
            case UInt8(ascii: "\r") where afterQuote:
                // CRLF after a quoted field.
                continue
            default:
                if afterQuote { stray = true }
                field.append(byte)
                fieldStart = false
            }
        }
    }

    private var readError: String?

    private mutating func nextByte() -> UInt8? {
        if position == buffer.count && !fill() { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    private mutating func peekByte() -> UInt8? {
        if position == buffer.count && !fill() { return nil }
        return buffer[position]
    }

    /// Drops input up to and including the next line break.
    private mutating func skipRestOfLine(wasNewline: Bool) {
        guard !wasNewline else { return }
        while let byte = nextByte() {
            if byte == UInt8(ascii: "\n") {
                line += 1
                return
            }
        }
    }

    /// Reads the next chunk; false at the end of the input or on an error (`readError`).
    private mutating func fill() -> Bool {
        guard !atEnd else { return false }
        buffer.removeAll(keepingCapacity: true)
        position = 0
        buffer.append(contentsOf: repeatElement(0, count: Self.chunkSize))
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, Self.chunkSize) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                readError = Errno.describe()
                atEnd = true
                buffer.removeAll()
                return false
            }
            buffer.removeSubrange(count...)
            if count == 0 { atEnd = true }
            // A byte-order mark at the very start of the input is no part of the first field.
            if firstChunk, buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            firstChunk = false
            return position < buffer.count
        }
    }

    /// A field as text: UTF-8 (invalid bytes replaced), without a trailing CR at a record's end.
    private static func decode(_ bytes: [UInt8], droppingCR: Bool = false) -> String {
        var slice = bytes[...]
        if droppingCR, slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}
