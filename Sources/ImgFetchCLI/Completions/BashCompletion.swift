/// The bash completion script: `complete -F _imgfetch imgfetch`, bash 4 or later.
///
/// The function reads `COMP_WORDS` itself rather than bash-completion's helpers, so it works
/// without that package; bash splits `--save-as=png` at `=` (COMP_WORDBREAKS), which it handles.
enum BashCompletion {
    static let script: String = {
        var valueCases: [String] = []
        var noValueHint: [String] = []
        for spec in OptionTable.options {
            guard let argument = spec.argument else { continue }
            let pattern = spec.spellings.joined(separator: "|")
            switch argument.kind {
            case .directory: valueCases.append("        \(pattern)) _imgfetch_files -d; return 0 ;;")
            case .file: valueCases.append("        \(pattern)) _imgfetch_files -f; return 0 ;;")
            case .choice(let words): valueCases.append("        \(pattern)) _imgfetch_words '\(words.joined(separator: " "))'; return 0 ;;")
            case .number, .text: noValueHint.append(pattern)
            }
        }
        // A number or free text: nothing to offer, but no option or file name either.
        valueCases.append("        \(noValueHint.joined(separator: "|"))) return 0 ;;")
        let options = OptionTable.options.flatMap { spec in spec.spellings.reversed() }.joined(separator: " ")
        return CompletionShell.bash.header + """
            # Install it as imgfetch in bash-completion's completions directory (Scripts/install does), or
            # source it from ~/.bashrc.

            _imgfetch_words() {
                mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
            }

            _imgfetch_files() {
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen "$1" -- "$cur")
            }

            _imgfetch() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
                ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
                if [[ $cur == = && $prev == --* ]]; then
                    cur=''
                elif [[ $prev == = ]] && ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[COMP_CWORD - 2]} == --* ]]; then
                    prev=${COMP_WORDS[COMP_CWORD - 2]}
                fi
                COMPREPLY=()
                for ((i = 1; i < COMP_CWORD; i++)); do
                    # After `--` every word is a list file.
                    [[ ${COMP_WORDS[i]} == -- ]] && { _imgfetch_files -f; return 0; }
                done
                case $prev in
            \(valueCases.joined(separator: "\n"))
                esac
                if [[ $cur == -* ]]; then
                    _imgfetch_words '\(options)'
                else
                    _imgfetch_files -f
                fi
                return 0
            }

            complete -F _imgfetch imgfetch

            """
    }()
}
