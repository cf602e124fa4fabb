import ImgFetchCore

/// One JSON object per list item, on one line, with keys in a fixed order.
enum JSONLine {
    static func encode(_ item: ItemReport) -> String {
        let result = item.result
        var fields: [(String, String)] = [
            ("url", string(item.displayURL)),
            ("status", string(result.status.rawValue)),
            ("paths", "[" + result.paths.map(string).joined(separator: ",") + "]"),
            ("http_status", result.httpStatus.map(String.init) ?? "null"),
            ("http_version", result.httpVersion.map { string($0.rawValue) } ?? "null"),
            ("bytes", String(result.bytes)),
            ("format", result.format.map { string($0.rawValue) } ?? "null"),
            ("width", result.image.map { String($0.width) } ?? "null"),
            ("height", result.image.map { String($0.height) } ?? "null"),
            ("channels", result.image.map { String($0.channels) } ?? "null"),
            ("bit_depth", result.image.map { String($0.bitDepth) } ?? "null"),
            ("verified", result.image?.verified == true ? "true" : "false"),
            ("output_width", result.image?.outputWidth.map(String.init) ?? "null"),
            ("output_height", result.image?.outputHeight.map(String.init) ?? "null"),
            ("attempts", String(result.attempts)),
            ("duration_ms", String(Int((result.duration * 1000).rounded()))),
            ("coalesced", result.coalesced ? "true" : "false"),
            ("cache", result.cache.map { string($0.rawValue) } ?? "null"),
            ("skip_reason", result.skipReason.map(string) ?? "null"),
        ]
        if let error = result.error {
            fields.append(("error", "{\"class\":\(string(error.kind.rawValue)),\"message\":\(string(error.message))}"))
        } else {
            fields.append(("error", "null"))
        }
        if let row = item.row {
            // A table's row: its caption and every other column, as strings, in header order.
            fields.append(("caption", row.caption.map(string) ?? "null"))
            fields.append(("columns", row.columnsJSON))
        }
        fields.append(("line", "{\"file\":\(string(item.position.listName)),\"line\":\(item.position.line)}"))
        if let key = item.sampleKey { fields.append(("key", string(key))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    }

    /// A JSON string literal (RFC 8259 escaping; non-ASCII passes through as UTF-8).
    static func string(_ text: String) -> String {
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
