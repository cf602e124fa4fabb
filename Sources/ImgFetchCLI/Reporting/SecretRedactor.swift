/// Keeps passwords out of every line imgfetch prints.
enum SecretRedactor {
    /// Replaces the password of `scheme://user:password@host` in text that did not parse as a URL.
    static func redactURLText(_ text: String) -> String {
        let separator = Array("://".utf8)
        guard let schemeEnd = text.utf8.indices.first(where: { text.utf8[$0...].starts(with: separator) }) else { return text }
        let authorityStart = text.utf8.index(schemeEnd, offsetBy: separator.count)
        let authorityEnd = text[authorityStart...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        let authority = text[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<authority.index(after: colon)]) + "***" + String(text[at...])
    }
}
