/// Text and links made safe for the gallery page. Names, URLs and error messages come from lists
/// and servers, so they are hostile input: nothing of them may become markup, end an attribute,
/// or turn a link into `javascript:`.
enum HTMLText {
    /// `text` for an HTML text node or a quoted attribute value: `& < > " '` become character
    /// references, and control characters (which HTML forbids, and which could hide text) become
    /// U+FFFD. Everything else passes through as UTF-8.
    static func escape(_ text: String) -> String {
        // Almost every field is plain: one pass over the bytes, no copy.
        guard text.utf8.contains(where: needsWork) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case _ where isControl(scalar): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A relative URL for a path given as its segments (`["..", "pics", "a b.jpg"]` gives
    /// `../pics/a%20b.jpg`): every byte of a segment except RFC 3986's unreserved characters is
    /// percent-encoded, so no segment can carry a scheme (`javascript:`), a query, a fragment or
    /// a separator, and the result needs no further escaping in an attribute.
    static func href(_ segments: [String]) -> String {
        segments.map(percentEncoded).joined(separator: "/")
    }

    static func percentEncoded(_ segment: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(segment.utf8.count)
        for byte in segment.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// C0 and C1 controls and DEL; tab and line feed too, since every field here is one line.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Bytes that may need escaping: the five markup characters, controls, and the lead byte of
    /// U+0080–U+009F (0xC2), checked scalar by scalar in the slow path.
    private static func needsWork(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"), 0x7F, 0xC2: true
        default: byte < 0x20
        }
    }
}
