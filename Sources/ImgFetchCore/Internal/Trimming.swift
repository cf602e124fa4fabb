/// `bytes` without leading and trailing spaces, tabs, CRs and LFs: HTTP's optional whitespace and
/// the line ends of header lines. Header values are trimmed this way before they become Strings.
func trimmingHTTPWhitespace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    guard let first = bytes.firstIndex(where: { !isSpace($0) }),
          let last = bytes.lastIndex(where: { !isSpace($0) }) else { return bytes[bytes.endIndex...] }
    return bytes[first...last]
}

extension StringProtocol where UTF8View: BidirectionalCollection {
    /// The text without HTTP whitespace at either end (FoundationEssentials has no
    /// `trimmingCharacters(in:)`).
    ///
    /// Works on the UTF-8 bytes: the four are ASCII, so the cut is exact, where String indices
    /// would round to whole Characters ("\r\n" is one, and so is U+0600 with the space after it).
    package var trimmingWhitespace: String {
        String(decoding: trimmingHTTPWhitespace(utf8), as: UTF8.self)
    }
}
