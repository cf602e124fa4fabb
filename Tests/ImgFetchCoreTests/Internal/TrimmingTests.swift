import XCTest
@testable import ImgFetchCore

final class TrimmingTests: XCTestCase {
    func testTrimsSpacesTabsAndLineEnds() {
        XCTAssertEqual(" \t1700\r\n".trimmingWhitespace, "1700")
        // "\r\n" is one Character: trimming by Character would keep it.
        XCTAssertEqual("max-age=60\r\n"[...].trimmingWhitespace, "max-age=60")
        XCTAssertEqual("a b".trimmingWhitespace, "a b")
    }

    func testAllWhitespaceAndEmptyGiveEmpty() {
        XCTAssertEqual(" \r\n\t ".trimmingWhitespace, "")
        XCTAssertEqual("".trimmingWhitespace, "")
    }

    func testATrailingSpaceAfterAPrependedMarkIsTrimmed() {
        // U+0600 and the space after it form one Character.
        XCTAssertEqual("x\u{600} ".trimmingWhitespace, "x\u{600}")
    }

    func testKeepsOtherUnicodeSpaceInside() {
        XCTAssertEqual("\u{00A0}x\u{00A0}".trimmingWhitespace, "\u{00A0}x\u{00A0}")
    }
}
