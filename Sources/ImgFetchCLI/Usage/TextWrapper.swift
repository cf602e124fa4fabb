/// Fills text to a width at spaces, for `--help`: terminals do not wrap words.
enum TextWrapper {
    /// `text` in lines of at most `width` characters (`firstWidth` for the first one); a longer word
    /// gets a line of its own, and so does a `tail` that does not fit: it is never split.
    static func lines(_ text: String, width: Int, firstWidth: Int? = nil, tail: String? = nil) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ").map(String.init) + (tail.map { [$0] } ?? []) {
            let limit = lines.isEmpty ? firstWidth ?? width : width
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= limit {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        lines.append(line)
        return lines
    }

    /// `text` filled to `width` columns, after `lead` on the first line and indented to `column`
    /// on the others. A `lead` that reaches past `column - 2` is followed by two spaces.
    static func hanging(_ lead: String, _ text: String, tail: String? = nil, column: Int, width: Int) -> [String] {
        let start = max(column, lead.count + 2)
        let body = lines(text, width: width - column, firstWidth: width - start, tail: tail)
        let first = lead + String(repeating: " ", count: start - lead.count) + body[0]
        return [first] + body.dropFirst().map { String(repeating: " ", count: column) + $0 }
    }
}
