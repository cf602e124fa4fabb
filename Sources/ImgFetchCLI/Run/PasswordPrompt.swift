import CTerminalPrompt

/// `-u USER` without a password: it is asked for on the terminal, with echo off, as curl asks,
/// so that it never appears in argv (`ps`), the shell's history or a log.
enum PasswordPrompt {
    /// `credentials` with a password: as given when it has one, else `USER:` and what the user
    /// typed at the prompt; nil when there is no terminal to ask on.
    static func complete(_ credentials: String) -> String? {
        if credentials.contains(":") { return credentials }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = CTerminalPrompt_readSecret("Enter host password for user '\(credentials)': ", &buffer, buffer.count)
        defer { for index in buffer.indices { buffer[index] = 0 } }
        guard length >= 0 else { return nil }
        return credentials + ":" + String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
