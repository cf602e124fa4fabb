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

    /// The command line as a log may show it: the password of `-u USER:PASS`, every `-H` header's
    /// value (tokens travel there) and the passwords of URLs replaced by `***`.
    static func redactArguments(_ arguments: [String]) -> [String] {
        var redacted: [String] = []
        var next: ((String) -> String)?
        for argument in arguments {
            if let redact = next {
                redacted.append(redact(argument))
                next = nil
                continue
            }
            switch argument {
            case "-u", "--user": next = credentials
            case "-H", "--header": next = header
            case _ where argument.hasPrefix("--user="): redacted.append("--user=" + credentials(String(argument.dropFirst(7))))
            case _ where argument.hasPrefix("--header="): redacted.append("--header=" + header(String(argument.dropFirst(9))))
            case _ where argument.hasPrefix("-u") && !argument.hasPrefix("--"): redacted.append("-u" + credentials(String(argument.dropFirst(2))))
            case _ where argument.hasPrefix("-H") && !argument.hasPrefix("--"): redacted.append("-H" + header(String(argument.dropFirst(2))))
            default: redacted.append(redactURLText(argument))
            }
            if next != nil { redacted.append(argument) }
        }
        return redacted
    }

    private static func credentials(_ value: String) -> String {
        value.firstIndex(of: ":").map { String(value[..<$0]) + ":***" } ?? value
    }

    private static func header(_ value: String) -> String {
        value.firstIndex(of: ":").map { String(value[..<$0]) + ": ***" } ?? value
    }

    /// `arguments` joined as a shell would read them back: each with a space, `'`, `"`, `\`, `$`
    /// or another special character in single quotes.
    static func shellWords(_ arguments: [String]) -> String {
        arguments.map { argument in
            let plain = !argument.isEmpty && argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@,+%".contains($0) }
            return plain ? argument : "'" + argument.map { $0 == "'" ? #"'\''"# : String($0) }.joined() + "'"
        }.joined(separator: " ")
    }
}
