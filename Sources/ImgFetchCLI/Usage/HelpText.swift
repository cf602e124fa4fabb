/// The text `imgfetch --help` prints to stdout, generated from `OptionTable` and `UsageDocument`:
/// one screen of the common options (`-h`), everything (`--help all`), or one group.
///
/// Every line stays under 80 columns so it reads in a default terminal.
public enum HelpText {
    /// Lines end before this column.
    static let width = 79
    /// Where an option's help starts.
    static let optionColumn = 29
    /// The short help's most lines: one screen.
    static let briefLimit = 60

    /// The text for `topic`, ending in a newline.
    public static func text(for topic: HelpTopic) -> String {
        switch topic {
        case .brief: brief
        case .all: all
        case .group(let name): group(named: name)
        }
    }

    /// One screen: what imgfetch does, the common options in their groups, a few examples, and where the rest is.
    static let brief: String = {
        var lines = ["Usage: \(UsageDocument.synopsis)"] + TextWrapper.lines(UsageDocument.briefDescription, width: width)
        for group in OptionTable.groups where group.options.contains(where: \.isCommon) {
            lines += ["", "\(group.title):"]
            for spec in group.options where spec.isCommon {
                lines += TextWrapper.hanging("  " + names(spec), spec.brief, tail: spec.defaultPhrase, column: optionColumn, width: width)
            }
        }
        lines += ["", "Examples:"]
        for example in UsageDocument.examples where example.isBrief {
            lines += example.command.split(separator: "\n").map { "  " + $0 }
        }
        lines += [""] + TextWrapper.lines("More: --help all (every option), --help TOPIC ("
            + OptionTable.groups.map(\.topic).joined(separator: ", ") + "), man imgfetch", width: width)
        return lines.joined(separator: "\n") + "\n"
    }()

    /// Everything: the description, the list format, every option by group, the output, exit codes and examples.
    static let all: String = {
        var lines = ["Usage: \(UsageDocument.synopsis)", ""]
        let summary = UsageDocument.summary.prefix(1).uppercased() + UsageDocument.summary.dropFirst() + ". "
        if case .paragraph(let first)? = UsageDocument.description.first {
            lines += TextWrapper.lines(summary + first, width: width)
        }
        lines += blocks(UsageDocument.description.dropFirst(), indent: 0)
        lines += section("List format", blocks(UsageDocument.listFormat, indent: 2))
        for group in OptionTable.groups {
            lines += section(group.title, optionLines(group.options))
        }
        lines += section("Other", TextWrapper.hanging("  --", OptionTable.endOfOptionsHelp, column: optionColumn, width: width)
            + TextWrapper.lines(OptionTable.notes, width: width - 2).map { "  " + $0 })
        lines += section("Output", blocks(UsageDocument.output, indent: 2))
        lines += [""] + blocks(UsageDocument.cacheIndex, indent: 0)
        lines += section("Error classes", blocks([.definitions(ErrorClassDocument.definitions)], indent: 2))
        lines += section("Exit status", blocks(UsageDocument.exitStatus, indent: 2))
        lines += section("Examples", exampleLines())
        return lines.joined(separator: "\n") + "\n"
    }()

    /// One group's options, with the usage line above them.
    private static func group(named topic: String) -> String {
        guard let group = OptionTable.groups.first(where: { $0.topic == topic }) else { return brief }
        let lines = ["Usage: \(UsageDocument.synopsis)"] + section(group.title, optionLines(group.options))
        return lines.joined(separator: "\n") + "\n"
    }

    private static func section(_ title: String, _ body: [String]) -> [String] {
        ["", "\(title):"] + body
    }

    /// `-o, --output-dir DIR`, indented so long-only options line up with the short ones.
    private static func names(_ spec: OptionSpec) -> String {
        (spec.short.map { "-\($0), " } ?? "    ") + "--\(spec.long)" + (spec.argument.map { " \($0.name)" } ?? "")
    }

    /// One line or more per option.
    private static func optionLines(_ options: [OptionSpec]) -> [String] {
        options.flatMap { spec in
            TextWrapper.hanging("  " + names(spec), spec.help, tail: spec.defaultPhrase, column: optionColumn, width: width)
        }
    }

    /// Each example's explanation, then its command under it.
    private static func exampleLines() -> [String] {
        UsageDocument.examples.flatMap { example in
            ["  " + example.explanation] + example.command.split(separator: "\n").map { "    " + $0 }
        }
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
