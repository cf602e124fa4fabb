import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The option table: complete, consistent with the parser, and the source of `--help`.
final class OptionTableTests: XCTestCase {
    /// The options another option needs beside it (`--fit pad` needs `--resize`).
    static func companions(_ long: String) -> [String] {
        switch long {
        case "fit", "upscale": ["--save-as", "png", "--resize", "8"]
        case "background": ["--save-as", "jpeg"]
        case "shard-samples", "shard-prefix", "hash", "extract-exif": ["--output-format", "webdataset"]
        case "verify-hash": ["--output-format", "webdataset", "--input-format", "csv"]
        case "key-column": ["--output-format", "webdataset", "--input-format", "csv"]
        case "column-type": ["--input-format", "csv"]
        case "shard-by": ["--shard", "0/2"]
        default: []
        }
    }

    func testEveryOptionIsDeclaredOnce() {
        let declared = OptionTable.options.map(\.long)
        XCTAssertEqual(declared.count, Set(declared).count, "an option is declared twice")
        XCTAssertEqual(declared.count, 76)
    }

    func testSpellingsAreUniqueAndWellFormed() {
        let spellings = OptionTable.options.flatMap(\.spellings)
        XCTAssertEqual(spellings.count, Set(spellings).count)
        for spec in OptionTable.options {
            XCTAssertTrue(spec.long.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "." }, spec.long)
            XCTAssertEqual(OptionTable.byLongName[spec.long]?.long, spec.long)
            if let short = spec.short { XCTAssertEqual(OptionTable.byShortName[short]?.long, spec.long) }
        }
        XCTAssertEqual(OptionTable.byLongName.count, OptionTable.options.count)
    }

    func testFlagsTakeNoArgumentAndValuedOptionsOne() {
        for spec in OptionTable.options {
            switch spec.effect {
            case .flag: XCTAssertNil(spec.argument, spec.long)
            case .value: XCTAssertNotNil(spec.argument, spec.long)
            }
        }
    }

    func testEveryChoiceParsesAndNothingElseDoes() throws {
        var choiceOptions = 0
        for spec in OptionTable.options {
            guard let words = spec.argument?.kind.choices, !words.isEmpty else { continue }
            choiceOptions += 1
            for word in words {
                XCTAssertNoThrow(try OptionParser.parse(["--\(spec.long)", word] + Self.companions(spec.long)), "--\(spec.long) \(word)")
            }
            XCTAssertThrowsError(try OptionParser.parse(["--\(spec.long)", "no-such-choice"]), spec.long)
        }
        XCTAssertEqual(choiceOptions, 11, "--input-format, --output-format, --shard-by, --save-as, --fit, --name, --if-running, "
                       + "--cache-policy, --progress, --completions, --hash")
    }

    func testEveryChoiceIsNamedInTheHelp() {
        for spec in OptionTable.options {
            let words = Set((spec.synopsis + " " + spec.help).split { !$0.isLetter && !$0.isNumber && $0 != "-" }.map(String.init))
            for choice in spec.argument?.kind.choices ?? [] {
                XCTAssertTrue(words.contains(choice), "the help of --\(spec.long) does not name \(choice)")
            }
        }
    }

    /// A default the table shows, given explicitly, changes nothing: the table cannot drift from
    /// `CommandLineOptions`.
    func testShownDefaultsAreTheParsersDefaults() throws {
        let defaults = CommandLineOptions()
        // What was given is kept apart from what it set, which is what is compared here.
        func parse(_ arguments: [String]) throws -> CommandLineOptions {
            var options = try OptionParser.parse(arguments)
            options.given = []
            return options
        }
        for spec in OptionTable.options {
            switch (spec.argument == nil ? "flag" : "valued", spec.defaultValue) {
            case ("valued", .value(let value)?) where spec.long == "user-agent":
                // Shown as a template: the whole default does not fit an 80-column help line.
                let filled = value.replacingOccurrences(of: "VERSION", with: DownloaderConfiguration.version)
                    .replacingOccurrences(of: "URL", with: DownloaderConfiguration.projectURL)
                XCTAssertEqual(defaults.downloaderConfiguration(outputDirectory: ".").userAgent, filled)
            case ("valued", .value("off")?), ("valued", .value("by name")?):
                break  // words, not values: the option is unset by default, or its default depends on the lists
            case ("valued", .value(let value)?):
                // With what the option needs beside it (--hash: a dataset), against that alone.
                let companions = Self.companions(spec.long)
                XCTAssertEqual(try parse(["--\(spec.long)", value] + companions), companions.isEmpty ? defaults : try parse(companions),
                               "--\(spec.long) \(value)")
            case ("flag", .selected?):
                XCTAssertEqual(try parse(["--\(spec.long)"]), defaults, "--\(spec.long)")
            case ("flag", .value("off")?):
                XCTAssertNotEqual(try parse(["--\(spec.long)"]), defaults, "--\(spec.long)")
            case ("flag", .value(let value)?):
                XCTFail("--\(spec.long): a flag's default is off or selected, not \(value)")
            case ("valued", .selected?):
                XCTFail("--\(spec.long): only a flag can be selected by default")
            case (_, nil):
                break
            default:
                XCTFail("--\(spec.long)")
            }
        }
    }

    func testSummariesAreShortAndHelpIsOneLine() {
        for spec in OptionTable.options {
            XCTAssertFalse(spec.summary.isEmpty, spec.long)
            XCTAssertLessThanOrEqual(spec.summary.count, 70, "completion menus show the summary: \(spec.summary)")
            XCTAssertFalse(spec.help.contains("\n"), spec.long)
            XCTAssertFalse(spec.help.hasSuffix("."), spec.long)
        }
        XCTAssertEqual(OptionTable.spec("save-as").summary, "what is written")
        XCTAssertEqual(OptionTable.spec("header").summary, "extra request header")
        XCTAssertEqual(OptionTable.spec("lifo").summary, "start the newest pending request first")
    }

    func testSynopsisAndDefaultPhrase() {
        XCTAssertEqual(OptionTable.spec("output-dir").synopsis, "-o, --output-dir DIR")
        XCTAssertEqual(OptionTable.spec("http1.1").synopsis, "--http1.1")
        XCTAssertEqual(OptionTable.spec("concurrency").defaultPhrase, "(default 16)")
        XCTAssertEqual(OptionTable.spec("fifo").defaultPhrase, "(default)")
        XCTAssertNil(OptionTable.spec("lifo").defaultPhrase)
    }

    // MARK: - --man and --completions

    func testManAndCompletionsAreActions() throws {
        XCTAssertEqual(try OptionParser.parse(["--man"]).action, .manPage)
        XCTAssertEqual(try OptionParser.parse(["--completions", "bash"]).action, .completions(.bash))
        XCTAssertEqual(try OptionParser.parse(["--completions=zsh"]).action, .completions(.zsh))
        XCTAssertEqual(try OptionParser.parse(["a.txt", "--completions", "fish", "-q"]).action, .completions(.fish))
        // The last action wins, except that help always does.
        XCTAssertEqual(try OptionParser.parse(["--man", "--version"]).action, .version)
        XCTAssertEqual(try OptionParser.parse(["--version", "--man"]).action, .manPage)
        XCTAssertEqual(try OptionParser.parse(["--completions", "bash", "--man"]).action, .manPage)
        XCTAssertEqual(try OptionParser.parse(["--help", "--man"]).action, .help(.brief))
        XCTAssertEqual(try OptionParser.parse(["--completions", "zsh", "-h"]).action, .help(.brief))
    }

    func testUnknownShellNamesTheAcceptedOnes() {
        XCTAssertThrowsError(try OptionParser.parse(["--completions", "tcsh"])) { error in
            XCTAssertEqual((error as? UsageError)?.description, "invalid value 'tcsh' for '--completions': expected bash, zsh or fish")
        }
        XCTAssertThrowsError(try OptionParser.parse(["--completions"])) { error in
            XCTAssertEqual((error as? UsageError)?.description, "option '--completions' needs a value")
        }
        XCTAssertThrowsError(try OptionParser.parse(["--man=yes"])) { error in
            XCTAssertEqual((error as? UsageError)?.description, "option '--man' takes no value")
        }
    }

    // MARK: - --help

    func testHelpListsEveryOptionWithItsHelpInTableOrder() {
        let help = HelpText.all.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        var searchFrom = help.startIndex
        for spec in OptionTable.options {
            let names = (spec.short.map { "-\($0), " } ?? "") + "--\(spec.long)" + (spec.argument.map { " \($0.name)" } ?? "")
            let entry = names + " " + spec.help + (spec.defaultPhrase.map { " " + $0 } ?? "")
            guard let range = help.range(of: entry, range: searchFrom..<help.endIndex) else {
                XCTFail("help lacks, or misorders: \(entry)")
                continue
            }
            searchFrom = range.upperBound
        }
    }

    func testHelpMentionsManAndCompletions() {
        XCTAssertTrue(HelpText.all.contains("      --man "))
        XCTAssertTrue(HelpText.all.contains("      --completions SHELL "))
        XCTAssertTrue(HelpText.all.contains("Exit status:\n"))
        XCTAssertTrue(HelpText.all.contains("\nList format:\n  One URL per line."))
        XCTAssertTrue(HelpText.all.contains("\n  --                         end of options; later arguments are lists\n"))
        XCTAssertTrue(HelpText.all.contains("\n    out=NAME                  save as NAME"), "fields are indented under their paragraph")
    }

    func testHelpOptionColumnsLineUp() {
        let column = HelpText.optionColumn
        let sections = HelpText.all.split(separator: "\n", omittingEmptySubsequences: false)
        let lines = OptionTable.groups.flatMap { group in
            sections.drop { $0 != group.title + ":" }.dropFirst().prefix { !$0.isEmpty }
        }
        XCTAssertGreaterThan(lines.count, OptionTable.options.count)
        for line in lines {
            let head = line.prefix(column)
            let text = line.dropFirst(column)
            // A name ending one column short of the help also gets two spaces, one past the column.
            let nameFillsTheColumn = line.range(of: #"^  (-., |    )--\S+ \S+  \S"#, options: .regularExpression)?
                .upperBound == line.index(line.startIndex, offsetBy: column + 2)
            if head.hasSuffix(" ") && !nameFillsTheColumn {
                // The help starts at the column: after a short name, or on a continuation line.
                XCTAssertFalse(text.isEmpty || text.hasPrefix(" "), String(line))
            } else {
                // A name reaching past the column: two spaces, then the help.
                XCTAssertNotNil(line.range(of: #"^  (-., |    )--\S+ \S+  \S"#, options: .regularExpression), String(line))
            }
        }
    }
}

extension OptionTable {
    /// The declaration of `--long`.
    static func spec(_ long: String) -> OptionSpec {
        guard let spec = byLongName[long] else { preconditionFailure("--\(long) is missing from OptionTable.options") }
        return spec
    }
}
