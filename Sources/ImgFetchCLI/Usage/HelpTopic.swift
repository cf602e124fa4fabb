/// What `--help` shows: one screen of the common options (`-h`), everything (`--help all`), or
/// one group of options (`--help requests`), as `curl --help CATEGORY` does.
public enum HelpTopic: Sendable, Equatable {
    case brief
    case all
    /// An `OptionGroup`, by its topic.
    case group(String)

    /// The words `--help` takes.
    static var names: [String] { ["all"] + OptionTable.groups.map(\.topic) }

    /// The topic a word names (any case), or nil.
    static func named(_ word: String) -> HelpTopic? {
        let word = word.lowercased()
        if word == "all" { return .all }
        return OptionTable.groups.contains { $0.topic == word } ? .group(word) : nil
    }
}
