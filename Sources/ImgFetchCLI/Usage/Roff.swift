/// Turns plain text into roff input for `ManPage`, so no character of it is read as markup.
enum Roff {
    /// `text` escaped for a roff text line: backslashes print as themselves, `-` as the ASCII
    /// hyphen-minus that options need (`\-`: a plain `-` may render as a Unicode hyphen), and
    /// anything beyond ASCII as a `\[uXXXX]` escape. With `code`, quotes, backquotes, `~` and `^`
    /// also stay ASCII, so a command copied from the page still runs.
    static func escape(_ text: String, code: Bool = false) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            case "'" where code: result += "\\(aq"
            case "`" where code: result += "\\(ga"
            case "~" where code: result += "\\(ti"
            case "^" where code: result += "\\(ha"
            case _ where !scalar.isASCII:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func bold(_ text: String, code: Bool = false) -> String {
        "\\fB" + escape(text, code: code) + "\\fR"
    }

    static func italic(_ text: String) -> String {
        "\\fI" + escape(text) + "\\fR"
    }

    /// Filled text as input lines of at most 80 bytes, a sentence starting each, as man pages are
    /// written. A line that ends in a period without ending a sentence gets `\&`, so roff does not
    /// add a sentence space after it.
    static func textLines(_ roff: String) -> [String] {
        var lines: [String] = []
        for sentence in sentences(roff) {
            var line = ""
            for word in sentence.split(separator: " ") {
                if !line.isEmpty && line.utf8.count + 1 + word.utf8.count > 80 {
                    lines.append(textLine(endsSentence(line) ? line + "\\&" : line))
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            if !line.isEmpty { lines.append(textLine(line)) }
        }
        return lines
    }

    /// `text` split after each `. `, `? ` or `! ` that a capital letter follows.
    private static func sentences(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var previous: [Character] = []
        for character in text {
            if character.isUppercase, previous.count == 2, previous[1] == " ", ".?!".contains(previous[0]) {
                sentences.append(String(current.dropLast()))
                current = ""
            }
            current.append(character)
            previous = Array((previous + [character]).suffix(2))
        }
        sentences.append(current)
        return sentences
    }

    /// Whether roff would take the end of `line` for the end of a sentence.
    private static func endsSentence(_ line: String) -> Bool {
        let trimmed = line.reversed().drop { ")]\"'*".contains($0) }
        return trimmed.first.map { ".?!".contains($0) } ?? false
    }

    /// A text line as roff must see it: a leading `.` or `'` would start a request, a leading space
    /// would break the line, so the first is guarded with `\&` and the second dropped.
    static func textLine(_ roff: String) -> String {
        let trimmed = roff.drop { $0 == " " }
        return trimmed.hasPrefix(".") || trimmed.hasPrefix("'") ? "\\&" + trimmed : String(trimmed)
    }
}
