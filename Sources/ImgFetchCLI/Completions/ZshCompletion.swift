/// The zsh completion script: an `_arguments` spec per spelling, for `compinit`.
///
/// Saved as `_imgfetch` in a directory of `$fpath` it is autoloaded; sourced, it registers itself
/// with `compdef`.
enum ZshCompletion {
    static let script: String = {
        var specs: [String] = []
        for spec in OptionTable.options {
            let description = "[" + escaped(spec.summary, also: "[]") + "]"
            let value: String
            if let argument = spec.argument {
                let action = switch argument.kind {
                case .directory: "_files -/"
                case .file: "_files"
                case .choice(let words): "(\(words.joined(separator: " ")))"
                case .number, .text: " "
                }
                value = ":" + escaped(argument.name, also: ":") + ":" + action
            } else {
                value = ""
            }
            // `*`: every option may be given again (the last value wins, or values add up).
            if let short = spec.short { specs.append(quoted("*-\(short)" + (spec.argument == nil ? "" : "+") + description + value)) }
            specs.append(quoted("*--\(spec.long)" + (spec.argument == nil ? "" : "=") + description + value))
        }
        specs.append(quoted("*:list file:_files"))
        return "#compdef imgfetch\n" + CompletionShell.zsh.header + """
            # Install it as _imgfetch in a directory of $fpath (Scripts/install does), or source it after compinit.

            _imgfetch() {
                _arguments -s -S \\
            \(specs.map { "        " + $0 }.joined(separator: " \\\n"))
            }

            if [[ $funcstack[1] == _imgfetch ]]; then
                _imgfetch "$@"
            else
                compdef _imgfetch imgfetch
            fi

            """
    }()

    /// `text` with backslashes and `characters` escaped for `_arguments`.
    private static func escaped(_ text: String, also characters: String) -> String {
        var result = ""
        for character in text {
            if character == "\\" || characters.contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// `text` in single quotes for zsh.
    private static func quoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
