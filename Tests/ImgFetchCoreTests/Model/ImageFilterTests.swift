import XCTest
@testable import ImgFetchCore

final class ImageFilterTests: XCTestCase {
    func testTheShorterSideAndTheRatioEitherWayRound() {
        let filter = ImageFilter(minSide: 32, maxAspectRatio: 2.5)
        XCTAssertNil(filter.rejection(width: 32, height: 80))
        XCTAssertNil(filter.rejection(width: 80, height: 32))
        XCTAssertEqual(filter.rejection(width: 31, height: 40)?.kind, .tooSmall)
        XCTAssertEqual(filter.rejection(width: 40, height: 31)?.kind, .tooSmall)
        XCTAssertEqual(filter.rejection(width: 81, height: 32)?.message, "81×32 image has a 2.53 aspect ratio, over --max-aspect-ratio 2.5")
        XCTAssertEqual(filter.rejection(width: 32, height: 96)?.kind, .aspectRatio)
        XCTAssertEqual(ImageFilter(maxAspectRatio: 3).rejection(width: 0, height: 5)?.message,
                       "0×5 image has an infinite aspect ratio, over --max-aspect-ratio 3")
        XCTAssertTrue(ImageFilter().keepsAll)
        XCTAssertNil(ImageFilter().rejection(width: 1, height: 10_000))
    }
}
