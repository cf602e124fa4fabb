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
            case .choice(let words)?:
                // Each value with what it does, after a tab, where the help says so.
                let descriptions = spec.choiceDescriptions
                line += " -x -a " + quoted(words.map { word in
                    descriptions[word].map { word + "\\t" + doubleQuoted($0) } ?? word
                }.joined(separator: " "))
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

    /// `text` in double quotes inside an `-a` list, which fish expands again: `\`, `"` and `$` escaped.
    private static func doubleQuoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            if character == "\\" || character == "\"" || character == "$" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

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
