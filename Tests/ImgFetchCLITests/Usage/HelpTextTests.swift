import Foundation
@testable import ImgFetchCLI
import ImgFetchCore
import XCTest

/// `-h` fits one screen and `--help all` holds everything; both come from the option table.
final class HelpTextTests: XCTestCase {
    private func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    }

    func testTheShortHelpFitsOneScreen() {
        XCTAssertLessThanOrEqual(lines(HelpText.brief).count, HelpText.briefLimit)
        for line in lines(HelpText.brief) { XCTAssertLessThan(line.count, 80, String(line)) }
        XCTAssertTrue(HelpText.brief.hasPrefix("Usage: imgfetch [OPTIONS] [URL | LIST ...]\n"))
    }

    func testTheShortHelpShowsTheCommonOptionsAndTheBriefExamples() {
        for spec in OptionTable.options where spec.long != "help" {  // the last line names --help
            let shown = HelpText.brief.contains("--\(spec.long) ") || HelpText.brief.contains("--\(spec.long)\n")
            XCTAssertEqual(shown, spec.isCommon, "--\(spec.long)")
        }
        for example in UsageDocument.examples {
            let first = String(example.command.split(separator: "\n")[0])
            XCTAssertEqual(HelpText.brief.contains("  " + first + "\n"), example.isBrief, first)
        }
        for topic in HelpTopic.names { XCTAssertTrue(HelpText.brief.contains(topic), "the short help does not name \(topic)") }
        // A choice's words are listed once.
        XCTAssertTrue(HelpText.brief.contains("--save-as FORMAT       what is written: original, png, ppm, pam, jpeg,\n"))
        XCTAssertTrue(HelpText.brief.contains("--progress MODE        progress on stderr: auto, bar, plain or none\n"))
    }

    func testEveryTopicShowsItsGroupOnly() throws {
        for group in OptionTable.groups {
            let text = HelpText.text(for: .group(group.topic))
            XCTAssertTrue(text.contains("\n\(group.title):\n"), group.title)
            for spec in OptionTable.options {
                XCTAssertEqual(text.contains("--\(spec.long) ") || text.contains("--\(spec.long)\n"),
                               group.options.contains { $0.long == spec.long }, "--help \(group.topic): --\(spec.long)")
            }
        }
        let help = try XCTUnwrap(OptionTable.byLongName["help"])
        for topic in HelpTopic.names where topic != "all" { XCTAssertTrue(help.help.contains(topic), "--help's help lacks \(topic)") }
    }

    func testAllHasEveryGroupTheErrorClassesAndEveryExample() {
        var position = HelpText.all.startIndex
        for group in OptionTable.groups {
            let heading = HelpText.all.range(of: "\n\(group.title):\n", range: position..<HelpText.all.endIndex)
            XCTAssertNotNil(heading, "--help all lacks \(group.title), or has it out of order")
            position = heading?.upperBound ?? position
        }
        for kind in DownloadError.Kind.allCases { XCTAssertTrue(HelpText.all.contains("\n  \(kind.rawValue) "), kind.rawValue) }
        for example in UsageDocument.examples { XCTAssertTrue(HelpText.all.contains(example.explanation)) }
    }

    /// Every class is kebab-case, and explained once with whether a retry may help.
    func testEveryErrorClassIsExplained() {
        XCTAssertEqual(ErrorClassDocument.entries.map(\.kind.rawValue), DownloadError.Kind.allCases.map(\.rawValue))
        for kind in DownloadError.Kind.allCases {
            XCTAssertTrue(kind.rawValue.allSatisfy { $0.isLowercase || $0 == "-" }, kind.rawValue)
        }
        XCTAssertEqual(DownloadError.Kind.truncated.rawValue, "truncated")
        // Results files of builds before kebab-case still read back as their classes.
        XCTAssertEqual(DownloadError.Kind(storedName: "notAnImage"), .notAnImage)
        XCTAssertEqual(DownloadError.Kind(storedName: "not-an-image"), .notAnImage)
        XCTAssertEqual(DownloadError.Kind(storedName: "tooLarge"), .tooLarge)
        XCTAssertEqual(DownloadError.Kind(storedName: "something new"), .invalidInput)
        XCTAssertNotEqual(DownloadError.Kind.truncated, DownloadError.Kind.notAnImage)
    }

    func testFishDescribesEachValueTheHelpDescribes() throws {
        let fit = try XCTUnwrap(OptionTable.byLongName["fit"])
        XCTAssertEqual(fit.choiceDescriptions, ["keep-ratio": "the shorter side becomes N", "keep-ratio-largest": "the longer side becomes N",
                                                "center-crop": "an NxN crop of the keep-ratio image", "pad": "NxN"])
        let input = try XCTUnwrap(OptionTable.byLongName["input-format"])
        XCTAssertEqual(input.choiceDescriptions["tsv"], "a table with a header row")
        XCTAssertTrue(FishCompletion.script.contains(#"center-crop\\t"an NxN crop of the keep-ratio image""#))
    }
}
