import XCTest
@testable import ImgFetchCore

/// What a sample key may hold, checked on its bytes.
final class SampleKeyTests: XCTestCase {
    func testUsableKeys() {
        for key in ["cat-1", "dog_2", "0001", "日本", "e\u{301}", String(repeating: "k", count: 200)] {
            XCTAssertNil(SampleKey.problem(key), key)
        }
    }

    func testUnusableKeysEvenBehindCombiningMarks() {
        XCTAssertEqual(SampleKey.problem(""), "empty")
        XCTAssertEqual(SampleKey.problem(String(repeating: "k", count: 201)), "longer than 200 bytes")
        XCTAssertEqual(SampleKey.problem("a\tb"), "a control character")
        // "." and "/" followed by a combining acute accent are other Characters, but the same bytes in the tar.
        XCTAssertEqual(SampleKey.problem("a.\u{301}b"), "a '.' (WebDataset reads the key up to the first dot)")
        XCTAssertEqual(SampleKey.problem("c/\u{301}d"), "a slash")
        XCTAssertEqual(SampleKey.problem("c\\d"), "a slash")
    }
}
