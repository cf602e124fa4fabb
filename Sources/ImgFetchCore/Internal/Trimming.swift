extension StringProtocol where UTF8View: BidirectionalCollection {
    /// The text without leading and trailing spaces, tabs, CRs and LFs: HTTP's optional whitespace
    /// and the line ends of header lines. (FoundationEssentials has no `trimmingCharacters(in:)`.)
    ///
    /// Works on the UTF-8 bytes: the four are ASCII, so the cut is exact, where String indices
    /// would round to whole Characters ("\r\n" is one, and so is U+0600 with the space after it).
    var trimmingWhitespace: String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isHTTPWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isHTTPWhitespace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

/// Space, tab, CR or LF.
func isHTTPWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
}
