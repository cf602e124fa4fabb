/// Keeps passwords out of every line imgfetch prints.
enum SecretRedactor {
    /// Replaces the password of `scheme://user:password@host` in text that did not parse as a URL.
    static func redactURLText(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = text[authorityStart...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        let authority = text[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<authority.index(after: colon)]) + "***" + String(text[at...])
    }
}
