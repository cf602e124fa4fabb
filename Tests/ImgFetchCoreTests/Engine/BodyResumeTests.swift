@testable import ImgFetchCore
import XCTest

/// `BodyResume`'s reading of a response: which validator `If-Range` may carry, and where a
/// `Content-Range` starts.
final class BodyResumeTests: XCTestCase {
    func testOnlyAStrongEntityTagOrTheDateValidatesARange() {
        XCTAssertEqual(BodyResume.validator(etag: "\"abc\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT"), "\"abc\"")
        XCTAssertEqual(BodyResume.validator(etag: "W/\"abc\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT"),
                       "Tue, 01 Dec 2026 10:00:00 GMT")
        XCTAssertEqual(BodyResume.validator(etag: "abc", lastModified: nil), nil)
        XCTAssertNil(BodyResume.validator(etag: nil, lastModified: nil))
    }

    func testTheStartOfAContentRange() {
        XCTAssertEqual(BodyResume.start(ofContentRange: "bytes 500-999/1000"), 500)
        XCTAssertEqual(BodyResume.start(ofContentRange: "bytes 0-0/*"), 0)
        for value in ["bytes */1000", "bytes -5/10", "bytes 5-/10", "items 1-2/3", "bytes 1a-2/3", "", "bytes 1-2-3/4"] {
            XCTAssertNil(BodyResume.start(ofContentRange: value), value)
        }
        XCTAssertEqual(BodyResume(url: "http://a/b", offset: 42, validator: "\"e\"").headers, ["Range: bytes=42-", "If-Range: \"e\""])
    }
}
