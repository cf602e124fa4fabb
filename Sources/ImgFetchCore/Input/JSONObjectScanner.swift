/// Reads one JSON object (a JSONL row, RFC 8259) into its members: each key decoded, each value
/// checked and kept as the exact text it was written as, so that a row's columns pass through
/// unchanged, numbers and nested values included. Nesting deeper than `maxDepth` is refused
/// rather than followed (a hostile row cannot exhaust the stack).
public struct JSONObjectScanner {
    /// Why the text is not a JSON object imgfetch reads.
    public struct Failure: Error, Equatable {
        public let reason: String
    }

    static let maxDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The members of the object `text` holds, in order; duplicate keys are kept as written.
    public static func members(of text: [UInt8]) throws(Failure) -> [(key: String, value: String)] {
        var scanner = JSONObjectScanner(text)
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else { throw Failure(reason: "not a JSON object") }
        var members: [(key: String, value: String)] = []
        try scanner.object(depth: 1) { key, value in members.append((key, Self.compacted(text[value]))) }
        scanner.skipSpace()
        guard scanner.index == text.count else { throw Failure(reason: "text after the JSON object") }
        return members
    }

    /// A checked value's text without the whitespace between its tokens: a line break inside an
    /// array would otherwise end the one-line JSON result it is copied into.
    private static func compacted(_ value: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var inString = false
        var escaped = false
        for byte in value {
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                out.append(byte)
                if byte == UInt8(ascii: "\"") { inString = true }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text of a JSON string value (as `members` returns it), or nil when it is another kind of value.
    public static func string(_ value: String) -> String? {
        var scanner = JSONObjectScanner(Array(value.utf8))
        guard scanner.peek == UInt8(ascii: "\""), let text = try? scanner.string(), scanner.index == scanner.bytes.count else {
            return nil
        }
        return text
    }

    // MARK: - Grammar

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek == byte else { throw unexpected() }
        index += 1
    }

    private func unexpected() -> Failure {
        guard let byte = peek else { return Failure(reason: "the JSON ends too early") }
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return Failure(reason: "unexpected \(shown) at offset \(index) of the JSON")
    }

    private mutating func value(depth: Int) throws(Failure) {
        guard depth <= Self.maxDepth else { throw Failure(reason: "JSON nested deeper than \(Self.maxDepth) levels") }
        switch peek {
        case UInt8(ascii: "{"):
            try object(depth: depth + 1) { _, _ in }
        case UInt8(ascii: "["):
            index += 1
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                return try expect(UInt8(ascii: "]"))
            }
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }

    /// An object at `index` (its `{` not yet read), its members' values at `depth`; `member` gets
    /// each key and the range of its value's text.
    private mutating func object(depth: Int, _ member: (String, Range<Int>) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "{"))
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            let key = try string()
            skipSpace()
            try expect(UInt8(ascii: ":"))
            skipSpace()
            let start = index
            try value(depth: depth)
            member(key, start..<index)
            skipSpace()
            if peek == UInt8(ascii: ",") {
                index += 1
                continue
            }
            return try expect(UInt8(ascii: "}"))
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for byte in word.utf8 { try expect(byte) }
    }

    private mutating func number() throws(Failure) {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, isDigit(first) else { throw unexpected() }
        index += 1
        if first != UInt8(ascii: "0") { while let byte = peek, isDigit(byte) { index += 1 } }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek, isDigit(byte) else { throw unexpected() }
            while let byte = peek, isDigit(byte) { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek, isDigit(byte) else { throw unexpected() }
            while let byte = peek, isDigit(byte) { index += 1 }
        }
        if index == start { throw unexpected() }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A string at `index`, decoded: escapes, `\u` escapes with surrogate pairs (a lone
    /// surrogate becomes U+FFFD), UTF-8 as it is (invalid bytes become U+FFFD).
    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw Failure(reason: "a JSON string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = peek else { throw Failure(reason: "a JSON string is not closed") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), peek == UInt8(ascii: "\\"), index + 1 < bytes.count,
                       bytes[index + 1] == UInt8(ascii: "u") {
                        let save = index
                        index += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            index = save
                        }
                    }
                    out += Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                default:
                    index -= 1
                    throw unexpected()
                }
            case 0x00..<0x20:
                index -= 1
                throw Failure(reason: "a control character inside a JSON string at offset \(index)")
            default:
                out.append(byte)
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek else { throw unexpected() }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw unexpected()
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
