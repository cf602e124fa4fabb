import Glibc

/// Reads a table as a stream of records: CSV as RFC 4180 has it (quoted fields with `""` for a
/// quote, commas and line breaks inside quotes, CRLF or LF), TSV (a tab between fields, no
/// quoting, one record per line), or whole lines (JSON Lines).
///
/// The input is read in chunks. A record over `maxRecordBytes` is reported as soon as it passes
/// that size, and the rest of it is skipped (its quotes still followed, so a long quoted field
/// does not split into false records) without keeping its bytes. A record that runs past
/// `maxSkippedBytes` (`/dev/zero`, a quote that never closes in a huge file) stops the reading.
struct RecordReader {
    enum Dialect: Sendable {
        case csv
        case tsv
        /// One record per line, the whole line its one field (JSON Lines).
        case lines
    }

    /// One record, numbered by the line it starts on.
    enum Record: Equatable {
        /// The record's fields; none for a line with nothing on it.
        case fields([String], line: Int)
        /// The record cannot be used; reading goes on after it.
        case invalid(reason: String, line: Int)
        /// Reading failed; no records follow.
        case readError(String, line: Int)
    }

    /// Longest record kept: far beyond any row of URLs and captions. Rows wait in memory until
    /// their item is done, so this bounds what one row can hold there.
    static let maxRecordBytes = 1 << 20
    /// Past this, a record with no end in sight stops the list: it is no list.
    static let maxSkippedBytes = 64 << 20
    private static let chunkSize = 64 * 1024

    private let descriptor: Int32
    private let dialect: Dialect
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var failed = false
    private var readError: String?
    /// The line the next byte is on.
    private var line = 1
    /// The rest of an over-long record is to be skipped (its size so far, and whether a quote is open).
    private var skipping: (size: Int, quoted: Bool, startLine: Int)?
    private var checkedByteOrderMark = false
    /// One read's worth, allocated once.
    private var chunk = [UInt8](repeating: 0, count: chunkSize)

    init(descriptor: Int32, dialect: Dialect) {
        self.descriptor = descriptor
        self.dialect = dialect
    }

    mutating func next() -> Record? {
        guard !failed else { return nil }
        if !checkedByteOrderMark { skipByteOrderMark() }
        if let skipped = skipping {
            skipping = nil
            if let stop = skipRest(of: skipped) { return stop }
        }
        let startLine = line
        var fields: [String] = []
        var field: [UInt8] = []
        var size = 0
        var quoted = false      // inside a quoted field
        var quotedAny = false   // the record had a quoted field (so it is not a blank line)
        var afterQuote = false  // a quoted field's closing quote was read
        var fieldStart = true
        var stray = false       // a character after a closing quote
        var consumedAny = false

        func finish() -> Record {
            if stray { return .invalid(reason: "a character follows a closing quote", line: startLine) }
            let last = Self.decode(field, droppingCR: !afterQuote)
            if fields.isEmpty && last.isEmpty && !quotedAny { return .fields([], line: startLine) }
            return .fields(fields + [last], line: startLine)
        }

        while true {
            guard let byte = nextByte() else {
                if let error = readError {
                    failed = true
                    return .readError(error, line: line)
                }
                if !consumedAny { return nil }
                if quoted {
                    return .invalid(reason: "a quoted field opened on this line is not closed before the end of the list",
                                    line: startLine)
                }
                return finish()
            }
            consumedAny = true
            size += 1
            if size > Self.maxRecordBytes {
                // Said now; the rest of the record is skipped on the next call.
                if byte == UInt8(ascii: "\n") && !quoted {
                    line += 1
                } else {
                    let toggles = dialect == .csv && byte == UInt8(ascii: "\"") && (quoted || fieldStart)
                    skipping = (size, quoted != toggles, startLine)
                }
                return .invalid(reason: "record longer than \(Self.maxRecordBytes >> 20) MiB", line: startLine)
            }
            if byte == UInt8(ascii: "\n") { line += 1 }
            if dialect != .csv {
                switch byte {
                case UInt8(ascii: "\t") where dialect == .tsv:
                    fields.append(Self.decode(field, droppingCR: false))
                    field.removeAll(keepingCapacity: true)
                case UInt8(ascii: "\n"):
                    return finish()
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
                fields.append(Self.decode(field, droppingCR: false))
                field.removeAll(keepingCapacity: true)
                fieldStart = true
                afterQuote = false
            case UInt8(ascii: "\n"):
                return finish()
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                quotedAny = true
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

    /// Skips the rest of an over-long record; a stop (`readError`) when it runs past `maxSkippedBytes`.
    private mutating func skipRest(of skipped: (size: Int, quoted: Bool, startLine: Int)) -> Record? {
        var (size, quoted) = (skipped.size, skipped.quoted)
        while let byte = nextByte() {
            size += 1
            if size > Self.maxSkippedBytes {
                failed = true
                return .readError("a record from line \(skipped.startLine) runs past \(Self.maxSkippedBytes >> 20) MiB without "
                                  + "ending: this is no \(dialect == .lines ? "list of lines" : "table"); stopped reading it",
                                  line: skipped.startLine)
            }
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                if !quoted { return nil }
            case UInt8(ascii: "\"") where dialect == .csv:
                quoted.toggle()  // "" inside a quoted field toggles twice
            default:
                break
            }
        }
        if let error = readError {
            failed = true
            return .readError(error, line: line)
        }
        return nil
    }

    private mutating func nextByte() -> UInt8? {
        guard available(1) else { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    private mutating func peekByte() -> UInt8? {
        available(1) ? buffer[position] : nil
    }

    /// A byte-order mark at the very start of the input is no part of the first field, however
    /// the reads cut it.
    private mutating func skipByteOrderMark() {
        checkedByteOrderMark = true
        if available(3), buffer[position] == 0xEF, buffer[position + 1] == 0xBB, buffer[position + 2] == 0xBF {
            position += 3
        }
    }

    /// Whether `count` unread bytes are in the buffer, reading until they are or the input ends.
    private mutating func available(_ count: Int) -> Bool {
        while buffer.count - position < count {
            guard fill() else { return buffer.count - position >= count }
        }
        return true
    }

    /// Appends the next read to the unread bytes; false at the end of the input or on an error (`readError`).
    private mutating func fill() -> Bool {
        guard !atEnd else { return false }
        if position > 0 {
            buffer.removeSubrange(0..<position)
            position = 0
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, Self.chunkSize) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                readError = Errno.describe()
                atEnd = true
                return false
            }
            if count == 0 {
                atEnd = true
                return false
            }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    /// A field as text: UTF-8 (invalid bytes replaced), without a trailing CR at a record's end.
    private static func decode(_ bytes: [UInt8], droppingCR: Bool) -> String {
        var slice = bytes[...]
        if droppingCR, slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}
