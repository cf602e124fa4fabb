/// One option, declared once: its spellings, what it does to `CommandLineOptions` (with its
/// value, parsed and checked), its default as users see it, and its help.
///
/// `OptionTable` holds one per option; the parser, `--help`, the man page, the shell completions
/// and the README check all read them, so no two of them can disagree.
struct OptionSpec: Sendable {
    /// The value an option takes: its name in the help (`N`, `DIR`) and what completes it.
    struct Argument: Sendable, Equatable {
        let name: String
        let kind: OptionValueKind
    }

    /// What giving the option does.
    enum Effect: Sendable {
        /// A flag sets something.
        case flag(@Sendable (inout CommandLineOptions) -> Void)
        /// An option with a value parses it (`spelling` is how the user wrote the option, for the
        /// error) and stores it.
        case value(Argument, @Sendable (_ options: inout CommandLineOptions, _ value: String, _ spelling: String) throws(UsageError) -> Void)
    }

    /// The long name, without `--`.
    let long: String
    /// The one-letter name, without `-`.
    let short: Character?
    let effect: Effect
    /// What happens without the option, as shown to a user; nil when there is nothing to say.
    let defaultValue: OptionDefault?
    /// What the option does: lower case, no final period. The part before the first `; ` or ` (`
    /// must read as a summary on its own: completion menus show only that part.
    let help: String
    /// Shown in the short help (`-h`), not only in `--help all` and the man page.
    private(set) var isCommon = false

    /// A flag: an option without a value.
    static func flag(_ long: String, short: Character? = nil, default defaultValue: OptionDefault? = nil, help: String,
                     _ set: @escaping @Sendable (inout CommandLineOptions) -> Void) -> OptionSpec {
        OptionSpec(long: long, short: short, effect: .flag(set), defaultValue: defaultValue, help: help)
    }

    /// An option that takes one value, `argument` in the help, which `parse` checks and stores.
    static func value(_ long: String, short: Character? = nil, _ argument: String, _ kind: OptionValueKind,
                      default defaultValue: OptionDefault? = nil, help: String,
                      _ parse: @escaping @Sendable (inout CommandLineOptions, String, String) throws(UsageError) -> Void) -> OptionSpec {
        OptionSpec(long: long, short: short, effect: .value(Argument(name: argument, kind: kind), parse),
                   defaultValue: defaultValue, help: help)
    }

    /// An option whose value is one of `Choice`'s raw values, stored at `field`; `expected` says
    /// which in an error (by default `a, b or c`).
    static func choice<Choice: CaseIterable & RawRepresentable & Sendable>(
        _ long: String, _ argument: String, _ field: WritableKeyPath<CommandLineOptions, Choice> & Sendable,
        expected: String? = nil, default defaultValue: OptionDefault? = nil, help: String) -> OptionSpec where Choice.RawValue == String {
        value(long, argument, .choice(Choice.allCases.map(\.rawValue)), default: defaultValue, help: help) {
            options, value, spelling throws(UsageError) in
            options[keyPath: field] = try ValueParser.choice(value, for: spelling, expected: expected)
        }
    }

    /// The same option, shown in the short help too.
    func common() -> OptionSpec {
        var spec = self
        spec.isCommon = true
        return spec
    }

    /// The value an option takes, or nil for a flag.
    var argument: Argument? {
        if case .value(let argument, _) = effect { argument } else { nil }
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

    /// What the help says of each choice, where it says it as `word: what it does` (`pad: NxN, …`),
    /// up to the first `, ` or ` (`: a completion menu's description of the value.
    var choiceDescriptions: [String: String] {
        let choices = argument?.kind.choices ?? []
        var descriptions: [String: String] = [:]
        for segment in Self.pieces(of: help[...], at: "; ") {
            let parts = Self.pieces(of: segment, at: ": ")
            guard parts.count > 1 else { continue }
            let text = Self.pieces(of: Self.pieces(of: parts[1], at: ", ")[0], at: " (")[0]
            for word in parts[0].split(whereSeparator: { $0 == " " || $0 == "," }) where choices.contains(String(word)) {
                descriptions[String(word)] = String(text)
            }
        }
        return descriptions
    }

    /// `text` cut at each `separator`.
    private static func pieces(of text: Substring, at separator: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(separator) {
                pieces.append(text[start..<index])
                index = text.index(index, offsetBy: separator.count)
                start = index
            } else {
                index = text.index(after: index)
            }
        }
        return pieces + [text[start...]]
    }

    /// What the short help says: the summary, and the words a choice takes.
    var brief: String {
        let choices = argument?.kind.choices ?? []
        let named = choices.allSatisfy { choice in summary.split { !$0.isLetter && $0 != "-" }.contains { $0 == choice } }
        return named ? summary : summary + ": " + choices.joined(separator: ", ")
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
