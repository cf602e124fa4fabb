/// What S3 and STS clients read of XML replies: an element's text, an error's code and message,
/// and the escaping of text put into a request body. Replies are read by searching for the element,
/// as the AWS SDKs' own light parsers do: none of them nests what imgfetch reads.
enum XMLText {
    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("\"", with: "&quot;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }

    static func unescaped(_ text: String) -> String {
        text.replacing("&quot;", with: "\"").replacing("&#34;", with: "\"").replacing("&lt;", with: "<")
            .replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }

    /// ` AccessDenied: Access Denied` from S3's XML error body, or nothing.
    static func errorText(_ body: [UInt8]) -> String {
        switch (element("Code", in: body), element("Message", in: body)) {
        case let (code?, message?): return " \(code): \(message)"
        case let (code?, nil): return " \(code)"
        case let (nil, message?): return " \(message)"
        case (nil, nil): return ""
        }
    }

    /// The text of the first `<name>` element of an XML error body (300 bytes at most, control
    /// characters as spaces, a CDATA section unwrapped), or nil.
    static func element(_ name: String, in body: [UInt8], limit: Int = 300) -> String? {
        let open = Array("<\(name)>".utf8), close = Array("</\(name)>".utf8)
        guard let start = find(open, in: body, from: 0), let end = find(close, in: body, from: start + open.count) else {
            return nil
        }
        var value = String(decoding: body[(start + open.count)..<end].prefix(limit).map { $0 < 0x20 ? UInt8(ascii: " ") : $0 },
                           as: UTF8.self)
        if value.hasPrefix("<![CDATA["), value.hasSuffix("]]>") { value = String(value.dropFirst(9).dropLast(3)) }
        return value.isEmpty ? nil : value
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        return (from...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
