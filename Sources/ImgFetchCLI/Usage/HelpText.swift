/// The text `imgfetch --help` prints to stdout, generated from `OptionTable` and `UsageDocument`.
///
/// Every line stays under 80 columns so it reads in a default terminal.
public enum HelpText {
    /// Lines end before this column.
    static let width = 79
    /// Where an option's help starts.
    static let optionColumn = 29

    /// The full help text, ending in a newline.
    public static let usage: String = {
        var lines = ["Usage: \(UsageDocument.synopsis)", ""]
        let summary = UsageDocument.summary.prefix(1).uppercased() + UsageDocument.summary.dropFirst() + ". "
        if case .paragraph(let first)? = UsageDocument.description.first {
            lines += TextWrapper.lines(summary + first, width: width)
        }
        lines += blocks(UsageDocument.description.dropFirst(), indent: 0)
        lines += section("List format", blocks(UsageDocument.listFormat, indent: 2))
        lines += section("Options", optionLines())
        lines += section("Output", blocks(UsageDocument.output, indent: 2))
        lines += [""] + blocks(UsageDocument.cacheIndex, indent: 0)
        lines += section("Exit status", blocks(UsageDocument.exitStatus, indent: 2))
        return lines.joined(separator: "\n") + "\n"
    }()

    private static func section(_ title: String, _ body: [String]) -> [String] {
        ["", "\(title):"] + body
    }

    /// One line or more per option, then `--` and the notes.
    private static func optionLines() -> [String] {
        var lines: [String] = []
        for spec in OptionTable.options {
            let names = (spec.short.map { "-\($0), " } ?? "    ") + "--\(spec.long)" + (spec.argument.map { " \($0.name)" } ?? "")
            lines += TextWrapper.hanging("  " + names, spec.help, tail: spec.defaultPhrase, column: optionColumn, width: width)
        }
        lines += TextWrapper.hanging("  --", OptionTable.endOfOptionsHelp, column: optionColumn, width: width)
        lines += TextWrapper.lines(OptionTable.notes, width: width - 2).map { "  " + $0 }
        return lines
    }

    /// Blocks one after the other; a block after a paragraph ending in ':' is indented under it.
    private static func blocks(_ blocks: some Sequence<TextBlock>, indent: Int) -> [String] {
        var lines: [String] = []
        var nested = false
        for block in blocks {
            let margin = indent + (nested ? 2 : 0)
            switch block {
            case .paragraph(let text):
                lines += TextWrapper.lines(text, width: width - margin).map { String(repeating: " ", count: margin) + $0 }
                nested = text.hasSuffix(":")
            case .definitions(let definitions):
                let column = margin + (definitions.map(\.term.count).max() ?? 0) + 2
                for definition in definitions {
                    lines += TextWrapper.hanging(String(repeating: " ", count: margin) + definition.term, definition.text,
                                                 column: column, width: width)
                }
                nested = false
            }
        }
        return lines
    }
}
