import Foundation
@testable import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The roff that `imgfetch --man` prints; `EndToEndTests.ManPageRenderingTests` renders it.
final class ManPageTests: XCTestCase {
    private let lines = ManPage.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    func testEscapesRoffSpecials() {
        XCTAssertEqual(Roff.escape(#"a\b"#), #"a\eb"#)
        XCTAssertEqual(Roff.escape("--save-as"), #"\-\-save\-as"#)
        XCTAssertEqual(Roff.escape("width×height"), #"width\[u00D7]height"#)
        XCTAssertEqual(Roff.escape("'K: V' ~ ^ `x`"), "'K: V' ~ ^ `x`")
        XCTAssertEqual(Roff.escape("'K: V' ~ ^ `x`", code: true), #"\(aqK: V\(aq \(ti \(ha \(gax\(ga"#)
        XCTAssertEqual(Roff.textLine(".imgfetch"), #"\&.imgfetch"#)
        XCTAssertEqual(Roff.textLine("'quoted'"), #"\&'quoted'"#)
        XCTAssertEqual(Roff.textLine("  indented"), "indented")
    }

    func testTextLinesStartASentenceEachAndStayUnder80Bytes() {
        XCTAssertEqual(Roff.textLines("One. Two? three. Four"), ["One.", "Two? three.", "Four"])
        let long = Array(repeating: "word", count: 40).joined(separator: " ") + ". next is here."
        let filled = Roff.textLines(long)
        XCTAssertGreaterThan(filled.count, 1)
        XCTAssertTrue(filled.allSatisfy { $0.utf8.count <= 80 })
        XCTAssertEqual(filled.joined(separator: " "), long, "only spaces become line breaks")
        // A period that ends a line but no sentence is followed by \& (no sentence space).
        let abbreviation = Roff.textLines(Array(repeating: "abc", count: 19).joined(separator: " ") + " e.g. more")
        XCTAssertEqual(abbreviation.first?.hasSuffix(#"e.g.\&"#), true, abbreviation.description)
        XCTAssertEqual(Roff.textLines(".dot at the start"), [#"\&.dot at the start"#])
    }

    /// Every variable the sources read by name (a string literal such as `"AWS_REGION"`, or one of
    /// the few without an underscore) is in ENVIRONMENT.
    func testEnvironmentNamesEveryVariableRead() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var names: Set<String> = ["TERM", "TMUX", "TMPDIR"]
        let pattern = try NSRegularExpression(pattern: #""([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)""#)
        // The Parquet reader's names are the format's words (DELTA_BINARY_PACKED), not variables.
        for case let file as URL in enumerator where file.pathExtension == "swift" && !file.path.contains("/Input/Parquet/") {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        names.subtract(["GRAYSCALE_ALPHA", "RGB_ALPHA"])  // pixel layouts, not variables
        XCTAssertGreaterThan(names.count, 15)
        let environment = UsageDocument.environment.flatMap { block -> [String] in
            guard case .definitions(let definitions) = block else { return [] }
            return definitions.map { $0.term + " " + $0.text }
        }.joined(separator: " ")
        let documented = Set(environment.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.map(String.init))
        for name in names.sorted() { XCTAssertTrue(documented.contains(name), "ENVIRONMENT lacks \(name)") }
    }

    /// The man page's JSON fields are the keys a `--jsonl` line has, in their order, a table's row
    /// and a sample's key included.
    func testJSONFieldsAreTheKeysOfAJSONLine() throws {
        var result = DownloadResult.failed(DownloadError(.http, "HTTP 404"), attempts: 1, httpStatus: 404)
        result.paths = []
        let row = TableRow(caption: "a cat", columns: [TableColumn(name: "id", value: "7")])
        let item = ItemReport(position: ListPosition(listName: "photos.csv", line: 2), displayURL: "http://example.com/a.jpg",
                              result: result, row: row, sampleKey: "000000_000001")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(JSONLine.encode(item).utf8)) as? [String: Any])
        let line = JSONLine.encode(item)
        let keys = object.keys.sorted { line.range(of: "\"\($0)\":")!.lowerBound < line.range(of: "\"\($1)\":")!.lowerBound }
        let documented = UsageDocument.jsonFields.flatMap { block -> [String] in
            guard case .definitions(let definitions) = block else { return [] }
            return definitions.flatMap { $0.term.components(separatedBy: ", ") }
        }
        XCTAssertEqual(documented, keys)
    }

    func testSectionsInOrder() {
        let sections = lines.filter { $0.hasPrefix(".SH ") }
        XCTAssertEqual(sections, [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", #".SH "LIST FORMAT""#,
                                  ".SH OUTPUT", #".SH "ERROR CLASSES""#, #".SH "EXIT STATUS""#, ".SH ENVIRONMENT", ".SH FILES",
                                  ".SH EXAMPLES", #".SH "SEE ALSO""#])
        XCTAssertTrue(ManPage.text.contains(".TH IMGFETCH 1 "))
        XCTAssertTrue(ManPage.text.contains("\n.SH NAME\nimgfetch \\- fetch many images fast and safely\n"))
        XCTAssertTrue(ManPage.text.hasSuffix(".BR curl (1),\n.BR wget2 (1)\n"))
    }

    func testEveryOptionIsATaggedParagraph() {
        for spec in OptionTable.options {
            var tag = spec.spellings.map { #"\fB"# + Roff.escape($0) + #"\fR"# }.joined(separator: ", ")
            if let argument = spec.argument { tag += #" \fI"# + Roff.escape(argument.name) + #"\fR"# }
            guard let index = lines.firstIndex(of: tag) else {
                XCTFail("no tag line \(tag)")
                continue
            }
            XCTAssertEqual(lines[index - 1], ".TP", tag)
        }
    }

    func testEveryExitCodeAndExampleIsThere() {
        for code in ["0", "1", "2", "130", "141"] {
            XCTAssertTrue(lines.contains(#"\fB"# + code + #"\fR"#), "no exit status \(code)")
        }
        XCTAssertTrue(lines.contains(#"\fBimgfetch urls.txt \-o pics\fR"#))
        XCTAssertTrue(lines.contains(#"\fBimgfetch urls.txt \-H \(aqX\-Api\-Key: 123\(aq \-u alice:secret \e\fR"#))
    }

    /// Every line is a known macro, a comment, or text that roff cannot take for a request; no
    /// unescaped `-` or backslash slips through, and no line is wider than 80 bytes.
    func testOnlyKnownMacrosAndNoRawSpecials() {
        let macros: Set<String> = [".TH", ".SH", ".SS", ".PP", ".TP", ".RS", ".RE", ".nf", ".fi", ".BR", ".nh", ".ad"]
        for line in lines.dropLast() {
            XCTAssertFalse(line.isEmpty, "a blank line is a roff paragraph break")
            XCTAssertLessThanOrEqual(line.utf8.count, 80, line)
            if line.hasPrefix(".\\\"") { continue }
            if line.hasPrefix(".") || line.hasPrefix("'") {
                XCTAssertTrue(macros.contains(String(line.prefix { $0 != " " })), line)
                continue
            }
            var previous: Character = " "
            for character in line {
                if character == "-" { XCTAssertEqual(previous, "\\", "unescaped hyphen in: \(line)") }
                previous = previous == "\\" && character == "\\" ? " " : character
            }
            XCTAssertTrue(line.allSatisfy(\.isASCII), line)
        }
    }
}
