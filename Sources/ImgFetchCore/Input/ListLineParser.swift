
/// Parses one list line: `URL [out=NAME] [priority=high|normal|low]`, blank lines and `#` comments skipped.
enum ListLineParser {
    static func parse(_ line: String) -> ListEntry {
        // Scanned as bytes: most lines are one URL and nothing else, and those are parsed without
        // splitting the line or copying it. The separators and the control characters are ASCII,
        // which no byte of a multi-byte UTF-8 sequence can be.
        let bytes = line.utf8
        guard let start = bytes.firstIndex(where: { !isSeparator($0) }), bytes[start] != UInt8(ascii: "#") else {
            return .skip
        }
        let urlEnd = bytes[start...].firstIndex(where: isSeparator) ?? bytes.endIndex
        let urlText = start == bytes.startIndex && urlEnd == bytes.endIndex ? line : String(line[start..<urlEnd])
        func invalid(_ reason: String) -> ListEntry { .invalid(text: urlText, reason: reason) }
        // C strings end at NUL: "http://a\0b" would otherwise reach libcurl as "http://a".
        if let control = bytes.first(where: { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }) {
            return invalid("control character 0x\(String(control, radix: 16, uppercase: true)) in the line (not a URL list?)")
        }
        let fields = line[urlEnd...].split(whereSeparator: { $0 == " " || $0 == "\t" })

        var outName: String?
        var priority: RequestPriority?
        for field in fields {
            guard let equals = field.firstIndex(of: "=") else {
                // Words after something that is no URL at all: the first word is the problem.
                if !urlText.contains(":") { return invalid("not a URL: '\(urlText)' has no http:// or https://") }
                return invalid("unexpected text '\(field)' after the URL (spaces in a URL must be written %20)")
            }
            let key = field[..<equals]
            let value = String(field[field.index(after: equals)...])
            switch key {
            case "out":
                guard outName == nil else { return invalid("out= given twice") }
                if let problem = problemWithOutName(value) { return invalid(problem) }
                outName = value
            case "priority":
                guard priority == nil else { return invalid("priority= given twice") }
                guard let parsed = RequestPriority(rawValue: value) else {
                    return invalid("invalid priority '\(value)' (expected high, normal or low)")
                }
                priority = parsed
            default:
                return invalid("unknown field '\(key)=' (expected out= or priority=)")
            }
        }
        do {
            let url = try ParsedURL(urlText)
            return .item(ListItem(url: url, options: DownloadOptions(fileName: outName, priority: priority ?? .normal)))
        } catch {
            return invalid(error.description)
        }
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// Why `out=NAME` is not a plain file name, or nil when it is one.
    static func problemWithOutName(_ name: String) -> String? {
        if name.isEmpty { return "out= needs a file name" }
        if name.contains("/") || name.contains("\\") { return "out=\(name) must be a plain file name, without a directory" }
        if name.hasPrefix(".") { return "out=\(name) must not start with a dot" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "out= contains a control character"
        }
        if name.utf8.count > FileNamer.maxExplicitBytes { return "out= name longer than \(FileNamer.maxExplicitBytes) bytes" }
        return nil
    }
}
