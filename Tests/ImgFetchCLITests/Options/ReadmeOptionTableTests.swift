import Foundation
import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The README's "### Options" table says what the option table says: the same options, spelled
/// the same, with the same values and defaults.
final class ReadmeOptionTableTests: XCTestCase {
    /// One row of the README table, `|`-separated cells with backticks and `\|` undone.
    private struct Row {
        let synopsis: String
        let meaning: String
        let defaultValue: String
    }

    private static let readme = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// The rows of the table under "### Options", up to the next heading.
    private func rows() throws -> [Row] {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "### Options" }.dropFirst().prefix { !$0.hasPrefix("#") }
        return lines.filter { $0.hasPrefix("| `") }.map { line in
            let cells = cells(of: String(line))
            return Row(synopsis: cells[0], meaning: cells[1], defaultValue: cells[2])
        }
    }

    /// A table row's cells, split at `|` but not at `\|`, trimmed, backticks removed.
    private func cells(of line: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var escaped = false
        for character in line.dropFirst() {
            if escaped {
                cell.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "|" {
                cells.append(cell.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: ""))
                cell = ""
            } else {
                cell.append(character)
            }
        }
        return cells + Array(repeating: "", count: max(0, 3 - cells.count))
    }

    /// How the README shows a default: the version as `VERSION`, a selected flag as `on`.
    private func readmeDefault(_ spec: OptionSpec) -> String {
        switch spec.defaultValue {
        case nil: ""
        case .selected: "on"
        case .value(let value): value.replacingOccurrences(of: DownloaderConfiguration.version, with: "VERSION")
        }
    }

    func testTheReadmeHasOneRowPerOption() throws {
        let rows = try rows()
        XCTAssertGreaterThan(rows.count, 0, "no '### Options' table in the README")
        let readme = rows.map(\.synopsis)
        let code = OptionTable.options.map(\.synopsis)
        XCTAssertEqual(readme.count, Set(readme).count, "the README lists an option twice")
        for synopsis in Set(code).subtracting(readme).sorted() {
            XCTFail("the README's option table lacks `\(synopsis)` (or spells it differently)")
        }
        for synopsis in Set(readme).subtracting(code).sorted() {
            XCTFail("the README's option table lists `\(synopsis)`, which imgfetch does not have as such")
        }
    }

    func testDefaultsAndChoicesAgree() throws {
        let rows = Dictionary(try rows().map { ($0.synopsis, $0) }, uniquingKeysWith: { first, _ in first })
        for spec in OptionTable.options {
            guard let row = rows[spec.synopsis] else { continue }  // reported by the test above
            XCTAssertEqual(row.defaultValue, readmeDefault(spec), "default of \(spec.synopsis)")
            let words = Set((row.synopsis + " " + row.meaning).split { !$0.isLetter && !$0.isNumber && $0 != "-" }.map(String.init))
            for choice in spec.argument?.kind.choices ?? [] {
                XCTAssertTrue(words.contains(choice), "the README's \(spec.synopsis) does not name \(choice)")
            }
        }
    }

    func testRowParsing() {
        XCTAssertEqual(cells(of: #"| `--name url\|hash` | a `b` c | url |"#), ["--name url|hash", "a b c", "url"])
        XCTAssertEqual(cells(of: "| `--lifo` | newest first | |"), ["--lifo", "newest first", ""])
    }
}
