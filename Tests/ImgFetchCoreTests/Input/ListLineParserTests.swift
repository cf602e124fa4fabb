import XCTest
@testable import ImgFetchCore

final class ListLineParserTests: XCTestCase {
    // MARK: - Skipped lines

    func testBlankCommentAndWhitespaceOnlyLinesAreSkipped() {
        for line in ["", "   ", "\t \t", "# a comment", "#http://example.com/a.jpg", "   # indented comment", "\t#"] {
            XCTAssertEqual(ListLineParser.parse(line), .skip, line.debugDescription)
        }
    }

    // MARK: - Items

    func testPlainURL() throws {
        let item = try parsedItem("http://example.com/cat.jpg")
        XCTAssertEqual(item.url, try ParsedURL("http://example.com/cat.jpg"))
        XCTAssertNil(item.options.fileName)
        XCTAssertEqual(item.options.priority, .normal)
    }

    func testSurroundingWhitespaceIsIgnored() throws {
        let item = try parsedItem("  \thttp://example.com/cat.jpg \t ")
        XCTAssertEqual(item.url.normalized, "http://example.com/cat.jpg")
    }

    func testOutField() throws {
        let item = try parsedItem("http://example.com/cat.jpg out=kitten.png")
        XCTAssertEqual(item.options.fileName, "kitten.png")
        XCTAssertEqual(item.options.priority, .normal)
    }

    func testPriorityField() throws {
        XCTAssertEqual(try parsedItem("http://example.com/a.jpg priority=high").options.priority, .high)
        XCTAssertEqual(try parsedItem("http://example.com/a.jpg priority=normal").options.priority, .normal)
        XCTAssertEqual(try parsedItem("http://example.com/a.jpg priority=low").options.priority, .low)
    }

    func testBothFieldsInEitherOrderSeparatedByTabsOrSpaces() throws {
        let first = try parsedItem("http://example.com/a.jpg\tout=x.jpg  priority=low")
        let second = try parsedItem("http://example.com/a.jpg priority=low\tout=x.jpg")
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.options.fileName, "x.jpg")
        XCTAssertEqual(first.options.priority, .low)
    }

    func testHashInsideAURLIsNotAComment() throws {
        XCTAssertEqual(try parsedItem("http://example.com/a.jpg#frag").url.normalized, "http://example.com/a.jpg")
    }

    // MARK: - Invalid shapes

    func testTextAfterTheURLWithoutEquals() {
        assertInvalid("http://example.com/my cat.jpg", text: "http://example.com/my",
                      reason: "unexpected text 'cat.jpg' after the URL (spaces in a URL must be written %20)")
    }

    func testUnknownField() {
        assertInvalid("http://example.com/a.jpg size=big", text: "http://example.com/a.jpg",
                      reason: "unknown field 'size=' (expected out= or priority=)")
    }

    func testInvalidPriority() {
        assertInvalid("http://example.com/a.jpg priority=urgent", text: "http://example.com/a.jpg",
                      reason: "invalid priority 'urgent' (expected high, normal or low)")
        assertInvalid("http://example.com/a.jpg priority=HIGH", text: "http://example.com/a.jpg",
                      reason: "invalid priority 'HIGH' (expected high, normal or low)")
    }

    func testFieldsGivenTwice() {
        assertInvalid("http://example.com/a.jpg out=a.jpg out=b.jpg", text: "http://example.com/a.jpg", reason: "out= given twice")
        assertInvalid("http://example.com/a.jpg priority=low priority=high", text: "http://example.com/a.jpg",
                      reason: "priority= given twice")
    }

    func testUnsupportedScheme() {
        assertInvalid("ftp://example.com/a.jpg", text: "ftp://example.com/a.jpg",
                      reason: "unsupported scheme 'ftp' (only http and https)")
    }

    func testNotAURL() {
        guard case .invalid(let text, let reason, _) = ListLineParser.parse("example.com/a.jpg") else {
            return XCTFail("a URL without a scheme was accepted")
        }
        XCTAssertEqual(text, "example.com/a.jpg")
        XCTAssertTrue(reason.hasPrefix("not a valid URL"), reason)
    }

    func testOverLongURL() {
        let url = "http://example.com/" + String(repeating: "a", count: 9000)
        assertInvalid(url, text: url, reason: "URL longer than 8192 bytes")
    }

    // MARK: - out= validation

    func testOutNameWithParentDirectory() {
        assertInvalid("http://example.com/a.jpg out=../x", text: "http://example.com/a.jpg",
                      reason: "out=../x must be a plain file name, without a directory")
    }

    func testOutNameWithDirectory() {
        assertInvalid("http://example.com/a.jpg out=a/b", text: "http://example.com/a.jpg",
                      reason: "out=a/b must be a plain file name, without a directory")
        assertInvalid("http://example.com/a.jpg out=a\\b", text: "http://example.com/a.jpg",
                      reason: "out=a\\b must be a plain file name, without a directory")
    }

    func testOutNameStartingWithADot() {
        assertInvalid("http://example.com/a.jpg out=.hidden", text: "http://example.com/a.jpg",
                      reason: "out=.hidden must not start with a dot")
        assertInvalid("http://example.com/a.jpg out=..", text: "http://example.com/a.jpg",
                      reason: "out=.. must not start with a dot")
    }

    func testEmptyOutName() {
        assertInvalid("http://example.com/a.jpg out=", text: "http://example.com/a.jpg", reason: "out= needs a file name")
    }

    func testOutNameWithControlCharacter() {
        XCTAssertEqual(ListLineParser.problemWithOutName("a\u{01}b"), "out= contains a control character")
        XCTAssertEqual(ListLineParser.problemWithOutName("a\u{7F}"), "out= contains a control character")
    }

    func testOutNameTooLong() {
        XCTAssertEqual(ListLineParser.problemWithOutName(String(repeating: "x", count: 241)), "out= name longer than 240 bytes")
        XCTAssertNil(ListLineParser.problemWithOutName(String(repeating: "x", count: 240)))
    }

    func testPlainOutNamesAreAccepted() {
        for name in ["cat.jpg", "a..b", "x", "café.png", "UPPER.JPG"] {
            XCTAssertNil(ListLineParser.problemWithOutName(name), name)
        }
    }

    func testEveryAcceptedOutNameIsUsedAsGiven() throws {
        // The parser accepts out= names up to 240 bytes; the namer must then use them unchanged.
        for length in [5, 200, 240] {
            let outName = String(repeating: "n", count: length - 4) + ".jpg"
            let item = try parsedItem("http://example.com/a.jpg out=\(outName)")
            var namer = try FileNamer(scheme: .url, claimsDirectory: "/tmp")
            let name = try namer.name(for: item.url, explicitName: item.options.fileName)
            XCTAssertEqual(name.fileName(for: .jpeg), outName, "out= name of \(length) bytes was changed")
        }
    }

    // MARK: - Helpers

    private func parsedItem(_ line: String, file: StaticString = #filePath, lineNumber: UInt = #line) throws -> ListItem {
        guard case .item(let item) = ListLineParser.parse(line) else {
            XCTFail("\(line.debugDescription) → \(ListLineParser.parse(line))", file: file, line: lineNumber)
            throw ParseFailure()
        }
        return item
    }

    private func assertInvalid(_ line: String, text: String, reason: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertEqual(ListLineParser.parse(line), .invalid(text: text, reason: reason), file: file, line: lineNumber)
    }

    private struct ParseFailure: Error {}

    /// Words that are no URL at all: the first one is named, not the second.
    func testWordsThatAreNoURLSaySo() {
        XCTAssertEqual(ListLineParser.parse("not a url at all"),
                       .invalid(text: "not", reason: "not a URL: 'not' has no http:// or https://"))
        XCTAssertEqual(ListLineParser.parse("http://example.com/a.jpg extra"),
                       .invalid(text: "http://example.com/a.jpg", reason: "unexpected text 'extra' after the URL (spaces in a URL must be written %20)"))
    }

}
