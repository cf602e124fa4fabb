import Foundation
@testable import ImgFetchCLI
import ImgFetchCore
import XCTest

/// The README's "### Error classes" table says what `ErrorClassDocument` says, class by class.
final class ReadmeErrorClassTableTests: XCTestCase {
    func testTheTableMatchesTheDocument() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "\n### Error classes\n"), "the README has no '### Error classes'")
        let section = text[start.upperBound...]
        let end = section.range(of: "\n#")?.lowerBound ?? section.endIndex
        let rows = section[..<end].split(separator: "\n").filter { $0.hasPrefix("| `") }.map { row in
            row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
        }
        XCTAssertEqual(rows.map { $0[0] }, ErrorClassDocument.entries.map(\.kind.rawValue))
        for (row, entry) in zip(rows, ErrorClassDocument.entries) {
            XCTAssertEqual(row[1], entry.meaning, entry.kind.rawValue)
            XCTAssertEqual(row[2], entry.retry, entry.kind.rawValue)
        }
    }
}
