/// Tells an image format from a body's first bytes, never from Content-Type or the name.
public enum ImageSniffer {
    /// Bytes of a body's head that `sniff` looks at.
    public static let headLength = 64

    /// What a body is: an image format, or a description of what it looks like instead.
    public enum Verdict: Sendable, Equatable {
        case image(ImageFormat)
        case notAnImage(String)
    }

    public static func sniff<Bytes: Collection<UInt8>>(_ head: Bytes) -> Verdict {
        let b = Array(head.prefix(headLength))
        if b.isEmpty { return .notAnImage("not an image: empty body") }
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .image(.jpeg) }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .image(.png) }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .image(.gif) }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .image(.webp) }
        if starts(Array("BM".utf8)) && b.count >= 26 { return .image(.bmp) }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .image(.tiff) }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            if brand == "avif" || brand == "avis" { return .image(.avif) }
            if ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"].contains(brand) { return .image(.heic) }
        }
        if starts([0xFF, 0x0A]) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return .image(.jxl)
        }
        // ICO and CUR: a reserved zero, type 1 or 2, and at least one image in the directory.
        if b.count >= 6 && b[0] == 0 && b[1] == 0 && (b[2] == 1 || b[2] == 2) && b[3] == 0 && (b[4] != 0 || b[5] != 0) {
            return .image(.ico)
        }
        if isSVG(b) { return .image(.svg) }
        return .notAnImage(describe(b))
    }

    /// An SVG document: its root element, maybe after an XML declaration, within the head.
    static func isSVG(_ bytes: [UInt8]) -> Bool {
        let text = lowercasedText(bytes)
        return text.hasPrefix("<svg") || (text.hasPrefix("<?xml") && text.contains("<svg"))
    }

    /// The head as text, without a byte-order mark or leading white space, lowercased.
    private static func lowercasedText(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).drop(while: { $0 == "\u{FEFF}" || $0.isWhitespace }).lowercased()
    }

    /// A short guess at what a non-image body is, for the error message.
    static func describe(_ bytes: [UInt8]) -> String {
        let text = lowercasedText(bytes)
        if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") || text.hasPrefix("<head") || text.hasPrefix("<body") {
            return "not an image: looks like HTML"
        }
        if text.hasPrefix("<?xml") { return "not an image: looks like XML" }
        if text.hasPrefix("{") || text.hasPrefix("[") { return "not an image: looks like JSON" }
        if bytes.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) || $0 >= 0x80 }) {
            return "not an image: looks like text"
        }
        let hex = bytes.prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
        return "not an image: unknown format (starts with \(hex))"
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
