/// The fish completion script: one `complete` line per option.
///
/// Fish completes files for positional arguments by default, so the list files need no line.
enum FishCompletion {
    static let script: String = {
        var lines: [String] = []
        for spec in OptionTable.options {
            var line = "complete -c imgfetch"
            if let short = spec.short { line += " -s \(short)" }
            line += " -l \(spec.long)"
            switch spec.argument?.kind {
            case nil: break
            case .directory?: line += " -x -a '(__fish_complete_directories)'"
            case .file?: line += " -r -F"
            case .choice(let words)?: line += " -x -a " + quoted(words.joined(separator: " "))
            case .number?, .text?: line += " -x"
            }
            lines.append(line + " -d " + quoted(spec.summary))
        }
        return CompletionShell.fish.header + """
            # Install it as imgfetch.fish in fish's vendor_completions.d (Scripts/install does), or in
            # ~/.config/fish/completions.

            \(lines.joined(separator: "\n"))

            """
    }()

    /// `text` in single quotes for fish, where only `\\` and `'` are special.
    private static func quoted(_ text: String) -> String {
        var result = "'"
        for character in text {
            if character == "\\" || character == "'" { result.append("\\") }
            result.append(character)
        }
        return result + "'"
    }
}
