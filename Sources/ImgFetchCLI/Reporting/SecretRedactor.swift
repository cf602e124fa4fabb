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
    /// value (tokens travel there) and the passwords of URLs replaced by `***`. Short options are
    /// read as the parser reads them, bundles included (`-qu bob:pw`, `-vHCookie: a`); after `--`
    /// every argument is a list.
    static func redactArguments(_ arguments: [String]) -> [String] {
        var redacted: [String] = []
        var next: ((String) -> String)?
        var optionsEnded = false
        for argument in arguments {
            if let value = next {
                redacted.append(value(argument))
                next = nil
            } else if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                redacted.append(redactURLText(argument))
            } else if argument == "--" {
                optionsEnded = true
                redacted.append(argument)
            } else if argument.hasPrefix("--") {
                let name = argument.dropFirst(2).prefix { $0 != "=" }
                let secret = secretValue(OptionTable.byLongName[String(name)])
                if let equals = argument.firstIndex(of: "=") {
                    let value = String(argument[argument.index(after: equals)...])
                    redacted.append(String(argument[...equals]) + (secret ?? redactURLText)(value))
                } else {
                    redacted.append(argument)
                    if let spec = OptionTable.byLongName[String(name)], spec.argument != nil { next = secret ?? redactURLText }
                }
            } else {
                // A bundle: flags, then at most one option with a value, the rest of the argument or the next one.
                var letters = argument.dropFirst()
                var shown = "-"
                while let letter = letters.popFirst() {
                    shown.append(letter)
                    guard let spec = OptionTable.byShortName[letter], spec.argument != nil else { continue }
                    let value = secretValue(spec) ?? redactURLText
                    if letters.isEmpty { next = value } else { shown += value(String(letters)) }
                    break
                }
                redacted.append(shown)
            }
        }
        return redacted
    }

    /// The secrets in `arguments` as byte ranges of each argument (its UTF-8): the bytes that
    /// `redactArguments` hides (a password of `-u`, a header's value, a URL's password), for the
    /// process to mask in its own argv, which every local user can read in /proc.
    static func secretRanges(_ arguments: [String]) -> [(argument: Int, bytes: Range<Int>)] {
        zip(arguments, redactArguments(arguments)).enumerated().compactMap { index, pair in
            let (original, shown) = (Array(pair.0.utf8), Array(pair.1.utf8))
            guard original != shown else { return nil }
            let prefix = zip(original, shown).prefix { $0 == $1 }.count
            let suffix = zip(original.reversed(), shown.reversed()).prefix { $0 == $1 }.count
            let end = max(prefix, min(original.count - suffix, original.count))
            return end > prefix ? (index, prefix..<end) : nil
        }
    }

    /// How the value of `spec` is shown, when it holds a secret (`-u`, `-H`).
    private static func secretValue(_ spec: OptionSpec?) -> ((String) -> String)? {
        switch spec?.long {
        case "user": credentials
        case "header": header
        default: nil
        }
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
