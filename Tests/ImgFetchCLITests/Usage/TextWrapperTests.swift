import XCTest
@testable import ImgFetchCLI

final class TextWrapperTests: XCTestCase {
    func testFillsToTheWidthAtSpaces() {
        XCTAssertEqual(TextWrapper.lines("aa bb cc dd", width: 5), ["aa bb", "cc dd"])
        XCTAssertEqual(TextWrapper.lines("aa bb cc", width: 4), ["aa", "bb", "cc"])
        XCTAssertEqual(TextWrapper.lines("a  b", width: 10), ["a b"])
        XCTAssertEqual(TextWrapper.lines("", width: 10), [""])
    }

    func testALongWordGetsItsOwnLine() {
        XCTAssertEqual(TextWrapper.lines("a abcdefgh b", width: 4), ["a", "abcdefgh", "b"])
    }

    func testFirstLineWidthAndUnbrokenTail() {
        XCTAssertEqual(TextWrapper.lines("aa bb cc", width: 8, firstWidth: 2), ["aa", "bb cc"])
        XCTAssertEqual(TextWrapper.lines("aa bb", width: 10, tail: "(default 1)"), ["aa bb", "(default 1)"])
        XCTAssertEqual(TextWrapper.lines("aa", width: 20, tail: "(default 1)"), ["aa (default 1)"])
    }

    func testHangingIndent() {
        XCTAssertEqual(TextWrapper.hanging("  -x", "one two three", column: 8, width: 17),
                       ["  -x    one two", "        three"])
        // A lead past the column: two spaces, then the text; later lines at the column.
        XCTAssertEqual(TextWrapper.hanging("  --long-name", "one two three", column: 8, width: 24),
                       ["  --long-name  one two", "        three"])
    }
}
