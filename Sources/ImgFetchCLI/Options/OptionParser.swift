import ImgFetchCore

/// Turns `argv` into `CommandLineOptions`, GNU style, by hand (no outside packages here).
///
/// Long options take `--name value` or `--name=value`; short options take `-j 4` or `-j4` and
/// bundle (`-qj4`, `-qo dir`). Options and lists may be interleaved; `--` ends options, and a lone
/// `-` is a list (stdin). Long names must match exactly: prefixes would make scripts break when a
/// later version adds an option sharing the prefix. Every argument is parsed even after `--help`,
/// so a typo is reported rather than hidden behind the help text.
///
/// What each option does to the result is its declaration's (`OptionTable`); what the run takes
/// from its environment is `RunEnvironment`'s.
public enum OptionParser {
    /// Parses `arguments` (without argv[0]), validates every value, and refuses options that do
    /// not go together.
    public static func parse(_ arguments: [String]) throws(UsageError) -> CommandLineOptions {
        var options = CommandLineOptions()
        var remaining = arguments[...]
        // The flag just before, for a `True` or `False` after it (img2dataset's, fire's way of
        // writing flags), which would otherwise be read as a list.
        var flagBefore: String?
        while let argument = remaining.popFirst() {
            let flag = flagBefore
            flagBefore = nil
            if argument == "--" {
                options.lists.append(contentsOf: remaining)
                break
            } else if argument.hasPrefix("--") {
                try parseLong(argument, remaining: &remaining, into: &options)
                if case .flag? = OptionTable.byLongName[String(argument.dropFirst(2))]?.effect { flagBefore = argument }
            } else if argument.hasPrefix("-"), argument != "-" {
                try parseShortBundle(argument, remaining: &remaining, into: &options)
            } else if let flag, ["true", "false"].contains(argument.lowercased()) {
                throw UsageError(option: flag, problem: .combination(
                    "takes no value: '\(argument)' after it would be read as a list; give the flag alone for true, "
                        + "leave it out for false"))
            } else {
                options.lists.append(argument)
            }
        }
        if !options.inputFormatGiven { options.table.format = try formatByName(options.lists) }
        // A dataset resized without a pixel format is written as JPEG, as img2dataset writes it.
        if options.outputFormat == .webdataset && !options.given.contains("save-as")
            && (options.resize != nil || options.maxDimension != nil) {
            options.saveAs = .jpeg
        }
        // A dataset's samples have the size asked for, as img2dataset makes them: small images are
        // enlarged unless --no-upscale. (--max-dimension is a most, never a size.)
        if options.outputFormat == .webdataset && options.resize != nil && !options.given.contains("no-upscale") {
            options.upscale = true
        }
        try OptionCombinations.check(options)
        return options
    }

    /// The format the lists' names say (`photos.csv` is a CSV table), without `--input-format`:
    /// lists of different formats in one run need it. URLs given as arguments and stdin say nothing.
    static func formatByName(_ lists: [String]) throws(UsageError) -> InputFormat {
        let named = lists.filter { !ListSource.isURL(argument: $0) }.compactMap { list in
            ListSniffer.format(ofListNamed: list).map { (list, $0) }
        }
        guard let first = named.first else { return .txt }
        if let other = named.first(where: { $0.1 != first.1 }) {
            throw UsageError(option: "--input-format", problem: .combination(
                "is needed for lists whose names say different formats ('\(first.0)' reads as \(first.1.rawValue), "
                    + "'\(other.0)' as \(other.1.rawValue)): give it when they are of one format after all, or read them "
                    + "in separate runs"))
        }
        return first.1
    }

    /// Handles `--name`, `--name value` and `--name=value`.
    private static func parseLong(_ argument: String, remaining: inout ArraySlice<String>,
                                  into options: inout CommandLineOptions) throws(UsageError) {
        let body = argument.dropFirst(2)
        let name: Substring
        let inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = body[..<equals]
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = body
            inlineValue = nil
        }
        let spelling = "--" + name
        guard let spec = OptionTable.byLongName[String(name)] else {
            if let reason = Suggestion.foreignOption(String(name)) {
                throw UsageError(option: spelling, problem: .foreignOption(reason))
            }
            let meant = name.isEmpty ? nil : Suggestion.closest(to: String(name), among: Array(OptionTable.byLongName.keys))
            throw UsageError(option: name.isEmpty ? argument : spelling, problem: .unknownOption, suggestion: meant.map { "--" + $0 })
        }
        options.given.insert(spec.long)
        if spec.long == "help" {
            options.action = .help(try helpTopic(inlineValue, remaining: &remaining, spelling: spelling))
            return
        }
        switch spec.effect {
        case .flag(let set):
            guard inlineValue == nil else { throw UsageError(option: spelling, problem: .unexpectedValue) }
            set(&options)
        case .value(_, let parse):
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw UsageError(option: spelling, problem: .missingValue)
            }
            try parse(&options, value, spelling)
        }
    }

    /// The topic after `--help` (`--help all`, `--help=requests`): a word `HelpTopic` knows, taken from the next
    /// argument only when it is one, so `imgfetch --help urls.txt` is still help. A word close to a topic
    /// (`--help request`) is refused with the suggestion, as a misspelt option is.
    private static func helpTopic(_ inlineValue: String?, remaining: inout ArraySlice<String>,
                                  spelling: String) throws(UsageError) -> HelpTopic {
        let word = inlineValue ?? remaining.first
        guard let word else { return .brief }
        if let topic = HelpTopic.named(word) {
            if inlineValue == nil { remaining.removeFirst() }
            return topic
        }
        let meant = Suggestion.closest(to: word.lowercased(), among: HelpTopic.names)
        if inlineValue != nil || meant != nil {
            throw UsageError(option: spelling, problem: .invalidValue(
                word, reason: "topics are " + HelpTopic.names.joined(separator: ", ")), suggestion: meant)
        }
        return .brief
    }

    /// Handles `-q`, `-j4`, `-j 4` and bundles such as `-qj4`: a value-taking option ends the bundle.
    private static func parseShortBundle(_ argument: String, remaining: inout ArraySlice<String>,
                                         into options: inout CommandLineOptions) throws(UsageError) {
        var letters = argument.dropFirst()
        while let letter = letters.popFirst() {
            let spelling = "-" + String(letter)
            guard let spec = OptionTable.byShortName[letter] else {
                throw UsageError(option: spelling, problem: .unknownOption)
            }
            options.given.insert(spec.long)
            if spec.long == "help", letters.isEmpty {
                options.action = .help(try helpTopic(nil, remaining: &remaining, spelling: spelling))
                return
            }
            switch spec.effect {
            case .flag(let set):
                set(&options)
            case .value(_, let parse):
                guard let value = letters.isEmpty ? remaining.popFirst() : String(letters) else {
                    throw UsageError(option: spelling, problem: .missingValue)
                }
                try parse(&options, value, spelling)
                return
            }
        }
    }
}
