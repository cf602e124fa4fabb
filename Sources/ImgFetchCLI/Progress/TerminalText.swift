/// Measures, cleans and cuts text for a terminal, in columns rather than characters or bytes.
///
/// The live area must never wrap a line (a wrapped line breaks the cursor arithmetic of the
/// redraw), so every width here is what a terminal shows: escape sequences count zero,
/// combining marks zero, East Asian wide characters and emoji two.
enum TerminalText {
    static let escape = "\u{1B}"
    static let ellipsis: Character = "…"

    // MARK: - Widths

    /// Columns `text` occupies on a terminal; escape sequences count zero.
    static func visibleWidth(_ text: String) -> Int {
        var scanner = EscapeScanner()
        var width = 0
        for character in text where !scanner.isInsideEscape(character) {
            width += self.width(of: character)
        }
        return width
    }

    /// Columns one grapheme occupies. Over-counting is safe (a line ends early); under-counting could wrap.
    static func width(of character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            // VARIATION SELECTOR-16 asks for emoji presentation, which terminals draw two columns wide.
            if scalar.value == 0xFE0F { width = max(width, 2); continue }
            width += self.width(of: scalar)
        }
        return width
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value >= 0x20 && value < 0x7F { return 1 }
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        // Hangul medial vowels and final consonants join the preceding syllable.
        if (0x1160...0x11FF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation || wideRanges.contains(where: { $0.contains(value) }) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (after Markus Kuhn's wcwidth), which glibc's `wcwidth` only knows in a UTF-8 locale.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
        0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF,
        0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    // MARK: - Cutting

    /// `text` cut to at most `width` columns, keeping escape sequences; closes an open color with a reset.
    static func truncated(_ text: String, toWidth width: Int) -> String {
        var scanner = EscapeScanner()
        var result = ""
        var used = 0
        var styled = false
        for character in text {
            if scanner.isInsideEscape(character) {
                result.append(character)
                if let sequence = scanner.completedSequence {
                    styled = sequence.hasSuffix("m") && sequence != escape + "[0m" && sequence != escape + "[m"
                }
                continue
            }
            let characterWidth = self.width(of: character)
            if used + characterWidth > width {
                return styled ? result + SGR.reset : result
            }
            used += characterWidth
            result.append(character)
        }
        return result
    }

    /// `text` (plain, no escapes) cut to at most `width` columns by replacing its middle with `…`,
    /// so both the start of a name and its extension stay visible.
    ///
    /// `distinct` is the range of characters where `text` differs from the names shown beside
    /// it. When an even cut would hide it, the cut moves so it stays: `img0001204.jpg` and
    /// `img0001205.jpg` become `img0…1204.jpg` and `img0…1205.jpg`, and names that also share
    /// their end get a second `…` (`IMG…234….jpg`, `IMG…299….jpg`).
    static func middleTruncated(_ text: String, toWidth width: Int, distinct: Range<Int>? = nil) -> String {
        guard visibleWidth(text) > width else { return text }
        guard width > 1 else { return width == 1 ? String(ellipsis) : "" }
        let available = width - 1
        let even = available / 2
        guard let distinct, visibleWidth(String(text.prefix(distinct.lowerBound))) >= available - even else {
            return cut(text, head: available - even, width: width)
        }
        let minimumHead = min(4, available - even)
        let distinctTail = visibleWidth(String(text.dropFirst(distinct.lowerBound)))
        let sharedEnd = visibleWidth(String(text.dropFirst(distinct.upperBound)))
        if distinctTail <= available - minimumHead || sharedEnd == 0 {
            // The differing part and everything after it fit in the tail (or it runs to the end).
            return cut(text, head: available - max(even, min(distinctTail, available - minimumHead)), width: width)
        }
        // Start, `…`, where it differs, `…`, the last few columns (usually the extension).
        let head = min(3, distinct.lowerBound)
        let tail = min(sharedEnd, 4)
        let middle = width - head - tail - 2
        guard middle >= 2 else { return cut(text, head: minimumHead, width: width) }
        // A character or two before the difference, when there is room, reads better: `00123`, not `3`.
        let context = max(0, min(2, middle - distinct.count, distinct.lowerBound - head))
        return prefix(text, columns: head) + String(ellipsis)
            + prefix(String(text.dropFirst(distinct.lowerBound - context)), columns: middle) + String(ellipsis)
            + suffix(text, columns: tail)
    }

    /// `text` as its first `head` columns, `…`, and as much of its end as fits in `width`.
    private static func cut(_ text: String, head: Int, width: Int) -> String {
        let start = prefix(text, columns: head)
        return start + String(ellipsis) + suffix(text, columns: width - 1 - visibleWidth(start))
    }

    /// The longest start of `text` at most `columns` wide.
    private static func prefix(_ text: String, columns: Int) -> String {
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = self.width(of: character)
            if used + characterWidth > columns { break }
            result.append(character)
            used += characterWidth
        }
        return result
    }

    /// The longest end of `text` at most `columns` wide.
    private static func suffix(_ text: String, columns: Int) -> String {
        var result: [Character] = []
        var used = 0
        for character in text.reversed() {
            let characterWidth = self.width(of: character)
            if used + characterWidth > columns { break }
            result.append(character)
            used += characterWidth
        }
        return String(result.reversed())
    }

    /// For each name, the characters where it differs from the most similar of the others: from
    /// the end of their common start to the start of their common end (see `middleTruncated`).
    static func distinctRanges(_ names: [String]) -> [Range<Int>] {
        let characters = names.map(Array.init)
        return characters.indices.map { index in
            let name = characters[index]
            var best: Range<Int> = 0..<name.count
            var longestPrefix = -1
            for other in characters.indices where other != index {
                let common = zip(name, characters[other]).prefix { $0 == $1 }.count
                guard common > longestPrefix else { continue }
                longestPrefix = common
                let limit = min(name.count, characters[other].count) - common
                let shared = zip(name.reversed(), characters[other].reversed()).prefix { $0 == $1 }.count
                best = common..<(name.count - min(shared, limit))
            }
            return best
        }
    }

    /// `text` followed by spaces up to `width` columns.
    static func padded(_ text: String, toWidth width: Int) -> String {
        let missing = width - visibleWidth(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }

    // MARK: - Cleaning

    /// `text` with nothing that could move the cursor or reorder the line: C0 controls and DEL in
    /// caret notation (`^[`, `^M`, `^?`), C1 controls and bidirectional overrides as `?`.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsReplacement) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            appendPrintable(scalar, to: &result)
        }
        return String(result)
    }

    /// A message line made safe to print above the live area: newlines and tabs stay, color
    /// sequences stay only when colors are allowed, every other control is shown in caret notation.
    static func printableMessage(_ text: String, keepingColors: Bool) -> String {
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\n" || scalar == "\t" {
                result.append(scalar)
            } else if scalar == "\r" && index + 1 < scalars.count && scalars[index + 1] == "\n" {
                // CRLF is a line end, not a request to overwrite the line.
            } else if scalar.value == 0x1B, let end = endOfColorSequence(scalars, from: index) {
                if keepingColors { result.append(contentsOf: scalars[index...end]) }
                index = end
            } else {
                appendPrintable(scalar, to: &result)
            }
            index += 1
        }
        return String(result)
    }

    /// The index of the final `m` when an SGR sequence (`ESC [ digits ; … m`) starts at `start`.
    private static func endOfColorSequence(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 1 < scalars.count, scalars[start + 1] == "[" else { return nil }
        var index = start + 2
        while index < scalars.count, scalars[index] == ";" || ("0"..."9").contains(scalars[index]) {
            index += 1
        }
        return index < scalars.count && scalars[index] == "m" ? index : nil
    }

    private static func needsReplacement(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F..<0xA0).contains(value) || bidiControls.contains(value)
    }

    private static func appendPrintable(_ scalar: Unicode.Scalar, to result: inout String.UnicodeScalarView) {
        let value = scalar.value
        if value < 0x20 {
            result.append("^")
            result.append(Unicode.Scalar(UInt8(value + 0x40)))
        } else if value == 0x7F {
            result.append(contentsOf: "^?".unicodeScalars)
        } else if needsReplacement(scalar) {
            result.append("?")
        } else {
            result.append(scalar)
        }
    }

    /// Marks that reorder what follows them (a name could show `gpj.exe` as `exe.jpg`), and line separators.
    private static let bidiControls: Set<UInt32> = [
        0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
        0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029,
    ]
}

/// The few Select Graphic Rendition sequences the renderer uses.
enum SGR {
    static let green = "\u{1B}[32m"
    static let red = "\u{1B}[31m"
    static let cyan = "\u{1B}[36m"
    static let yellow = "\u{1B}[33m"
    static let reset = "\u{1B}[0m"
}

/// Follows a string one grapheme at a time and tells which graphemes belong to an escape
/// sequence (`ESC [ … final` or a two-character `ESC x`), which take no columns.
struct EscapeScanner {
    private enum State { case text, escape, controlSequence }
    private var state = State.text
    private var current = ""
    /// The sequence that the last grapheme completed, if it completed one.
    private(set) var completedSequence: String?

    mutating func isInsideEscape(_ character: Character) -> Bool {
        completedSequence = nil
        switch state {
        case .text:
            guard character == "\u{1B}" else { return false }
            state = .escape
            current = String(character)
        case .escape:
            current.append(character)
            if character == "[" {
                state = .controlSequence
            } else {
                finish()
            }
        case .controlSequence:
            current.append(character)
            // A final byte is 0x40–0x7E; a mark after it may share its grapheme, so look at the first scalar.
            if let first = character.unicodeScalars.first, (0x40...0x7E).contains(first.value) {
                finish()
            }
        }
        return true
    }

    private mutating func finish() {
        completedSequence = current
        current = ""
        state = .text
    }
}
