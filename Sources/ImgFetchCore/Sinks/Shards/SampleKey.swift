/// What a sample key may be: a tar member name's stem that WebDataset splits back off its
/// extension (at the first dot), so no dot and no slash, and nothing a file name cannot hold.
public enum SampleKey {
    public static let maxBytes = 200

    /// Why `key` cannot be a sample key; nil when it can.
    public static func problem(_ key: String) -> String? {
        if key.isEmpty { return "empty" }
        if key.utf8.count > maxBytes { return "longer than \(maxBytes) bytes" }
        if key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "a control character" }
        // By bytes: a "." followed by a combining mark is another Character, but still a dot in the tar.
        if key.utf8.contains(UInt8(ascii: ".")) { return "a '.' (WebDataset reads the key up to the first dot)" }
        if key.utf8.contains(UInt8(ascii: "/")) || key.utf8.contains(UInt8(ascii: "\\")) { return "a slash" }
        return nil
    }
}
