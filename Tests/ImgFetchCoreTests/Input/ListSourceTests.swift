import XCTest
@testable import ImgFetchCore

/// What an argument is: a URL to fetch (as curl and wget take them) or a list to read.
final class ListSourceTests: XCTestCase {
    func testAnArgumentThatBeginsWithHTTPOrHTTPSIsAURL() {
        for argument in ["http://a/b.jpg", "https://a/b.jpg", "HTTPS://A/B.JPG", "Http://x", "http://"] {
            XCTAssertTrue(ListSource.isURL(argument: argument), argument)
        }
        for argument in ["urls.txt", "-", "./http://a/b", "ftp://a/b", "http:/a", "https", "a/http://b", ""] {
            XCTAssertFalse(ListSource.isURL(argument: argument), argument)
        }
    }

    func testURLArgumentsAreItemsNamedByTheirPlaceAndStdinIsNotRead() throws {
        let sources = try ListSource.openAll(["https://a.example/1.jpg", "http://b.example/2.png"])
        XCTAssertEqual(sources.map(\.name), [ListSource.argumentsName, ListSource.argumentsName])
        let first = try XCTUnwrap(sources[0].next())
        XCTAssertEqual(first.line, 1)
        guard case .item(let item) = first.entry else { return XCTFail("\(first.entry)") }
        XCTAssertEqual(item.url.normalized, "https://a.example/1.jpg")
        XCTAssertNil(sources[0].next(), "one item per argument")
        XCTAssertEqual(sources[1].next()?.line, 2)
    }

    func testABadURLArgumentIsAnInvalidEntryNotASetupError() throws {
        let sources = try ListSource.openAll(["http://"])
        let entry = try XCTUnwrap(sources.first?.next())
        guard case .invalid = entry.entry else { return XCTFail("\(entry.entry)") }
    }
}
