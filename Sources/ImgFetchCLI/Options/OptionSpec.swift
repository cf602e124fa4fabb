/// One option as users see it: its spellings, its value, its default and its help.
///
/// `OptionTable` holds one per option; the parser, `--help`, the man page, the shell completions
/// and the README check all read them, so no two of them can disagree.
struct OptionSpec: Sendable {
    /// The value an option takes: its name in the help (`N`, `DIR`) and what completes it.
    struct Argument: Sendable, Equatable {
        let name: String
        let kind: OptionValueKind
    }

    /// What the parser does with the option.
    let option: Option
    /// The long name, without `--`.
    let long: String
    /// The one-letter name, without `-`.
    let short: Character?
    /// The value, or nil for a flag.
    let argument: Argument?
    /// What happens without the option, as shown to a user; nil when there is nothing to say.
    let defaultValue: OptionDefault?
    /// What the option does: lower case, no final period. The part before the first `; ` or ` (`
    /// must read as a summary on its own: completion menus show only that part.
    let help: String

    /// A flag: an option without a value.
    static func flag(_ flag: Option.Flag, _ long: String, short: Character? = nil, default defaultValue: OptionDefault? = nil,
                     help: String) -> OptionSpec {
        OptionSpec(option: .flag(flag), long: long, short: short, argument: nil, defaultValue: defaultValue, help: help)
    }

    /// An option that takes one value, `argument` in the help.
    static func valued(_ valued: Option.Valued, _ long: String, short: Character? = nil, _ argument: String,
                       _ kind: OptionValueKind, default defaultValue: OptionDefault? = nil, help: String) -> OptionSpec {
        OptionSpec(option: .valued(valued), long: long, short: short, argument: Argument(name: argument, kind: kind),
                   defaultValue: defaultValue, help: help)
    }

    /// The spellings a user may type, short first: `["-o", "--output-dir"]`.
    var spellings: [String] {
        (short.map { ["-\($0)"] } ?? []) + ["--\(long)"]
    }

    /// The option as the help and the README show it: `-o, --output-dir DIR`.
    var synopsis: String {
        spellings.joined(separator: ", ") + (argument.map { " \($0.name)" } ?? "")
    }

    /// The help up to its first `; ` or ` (`: a description short enough for a completion menu.
    var summary: String {
        var index = help.startIndex
        while index < help.endIndex, !help[index...].hasPrefix("; "), !help[index...].hasPrefix(" (") {
            index = help.index(after: index)
        }
        return String(help[..<index])
    }

    /// The default as `--help` shows it after the help: `(default 16)`, or `(default)` for a flag.
    var defaultPhrase: String? {
        switch defaultValue {
        case nil: nil
        case .value(let value): "(default \(value))"
        case .selected: "(default)"
        }
    }
}

/// What completes an option's value.
enum OptionValueKind: Sendable, Equatable {
    /// A number (`N`, `SEC`, `BYTES`): nothing to complete.
    case number
    /// Free text (a header, credentials): nothing to complete.
    case text
    /// A file name.
    case file
    /// A directory name.
    case directory
    /// One of these words.
    case choice([String])

    /// The words a choice accepts; empty for the other kinds.
    var choices: [String] {
        if case .choice(let words) = self { words } else { [] }
    }
}

/// What happens when an option is not given, as shown to a user.
enum OptionDefault: Sendable, Equatable, ExpressibleByStringLiteral {
    /// The value used without the option (`16`, `.`), or a word for the behaviour (`off`).
    case value(String)
    /// A flag whose behaviour is in effect unless another option says otherwise (`--fifo`).
    case selected

    init(stringLiteral value: String) {
        self = .value(value)
    }
}
