extension StringProtocol {
    /// The text without leading and trailing spaces, tabs, CRs and LFs: HTTP's optional whitespace
    /// and the line ends of header lines. (FoundationEssentials has no `trimmingCharacters(in:)`.)
    ///
    /// Works on Unicode scalars: "\r\n" is one `Character`, so comparing Characters would miss it.
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        // Sliced as scalars: a closed range of String indices would round `last` up to the end of
        // its Character, which can take a trailing space along (after a prepended mark, U+0600).
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }
}
