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

    func testOnlyTheWholeRestOfTheBodyIsAppended() {
        let resume = BodyResume(url: "http://a/b", offset: 500, validator: "\"e\"", total: 1000)
        XCTAssertTrue(resume.isRest("bytes 500-999/1000"))
        XCTAssertTrue(resume.isRest("bytes 500-999/*"))
        for value in ["bytes 400-999/1000", "bytes 500-799/1000", "bytes 500-1199/1200", "bytes 500-999/2000", "bytes */1000",
                      "bytes -5/10", "bytes 5-/10", "items 500-999/1000", "bytes 5a0-999/1000", "", "bytes 500-999-3/1000",
                      "bytes 999-500/1000", "bytes 500-1000/1000"] {
            XCTAssertFalse(resume.isRest(value), value)
        }
        // Without a length from the cut-off response, the range must still reach its own end.
        let unknown = BodyResume(url: "http://a/b", offset: 500, validator: "\"e\"", total: nil)
        XCTAssertTrue(unknown.isRest("bytes 500-1199/1200"))
        XCTAssertFalse(unknown.isRest("bytes 500-799/1200"))
        XCTAssertEqual(resume.headers, ["Range: bytes=500-", "If-Range: \"e\""])
    }
}
