/// Writes one JSON object, members in the order they are added: the one place where imgfetch's
/// JSON (result lines, sample records, shard stats, a table's columns) is put together and escaped.
///
///     var json = JSONWriter()
///     json.add("url", "https://example.com/a.jpg")
///     json.add("width", 640 as Int?)
///     json.add("error", object: { $0.add("class", "http") })
///     json.line   // {"url":"https://example.com/a.jpg","width":640,"error":{"class":"http"}}\n
///
/// `nil` is written as `null`. Strings are escaped as RFC 8259 requires; non-ASCII passes through
/// as UTF-8.
public struct JSONWriter: Sendable {
    private var text: String
    private(set) var isEmpty: Bool

    /// An empty object.
    public init() {
        text = "{"
        isEmpty = true
    }

    /// An object that goes on after `members`, the text of an object without its closing `}`
    /// (`{"a":1`), as read back from a file that this writer wrote.
    public init(continuing members: String) {
        text = members
        isEmpty = members.utf8.last == UInt8(ascii: "{")
    }

    /// The object.
    public var object: String { text + "}" }

    /// The object on a line of its own (JSON Lines).
    public var line: String { text + "}\n" }

    public mutating func add(_ key: String, _ value: String?) {
        add(key, json: value.map(Self.string))
    }

    public mutating func add(_ key: String, _ value: Int?) {
        add(key, json: value.map { String($0) })
    }

    public mutating func add(_ key: String, _ value: Bool) {
        add(key, json: value ? "true" : "false")
    }

    /// A number with as many digits as `value` needs (`1.5`, `0.001`).
    public mutating func add(_ key: String, _ value: Double) {
        add(key, json: value.isFinite ? String(value) : nil)
    }

    public mutating func add(_ key: String, _ values: [String]) {
        add(key, json: "[" + values.map(Self.string).joined(separator: ",") + "]")
    }

    /// An object, built by `build`.
    public mutating func add(_ key: String, object build: (inout JSONWriter) -> Void) {
        var member = JSONWriter()
        build(&member)
        add(key, json: member.object)
    }

    /// A value that is JSON already (a JSON Lines table's member, kept as written); nil: `null`.
    public mutating func add(_ key: String, json value: String?) {
        if !isEmpty { text += "," }
        isEmpty = false
        text += Self.string(key)
        text += ":"
        text += value ?? "null"
    }

    /// `text` as a JSON string literal.
    public static func string(_ text: String) -> String {
        // Most strings (URLs, paths, captions) need no escape: one scan of the bytes, one copy.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
