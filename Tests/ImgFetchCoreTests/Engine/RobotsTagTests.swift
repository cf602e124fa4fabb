import XCTest
@testable import ImgFetchCore

final class RobotsTagTests: XCTestCase {
    func testEachOptOutDirectiveOptsOut() {
        for directive in ["noai", "noimageai", "noindex", "noimageindex", "none", "NOAI", " noindex "] {
            XCTAssertTrue(RobotsTag.optsOut(directive, agent: "imgfetch"), directive)
        }
        XCTAssertTrue(RobotsTag.optsOut("nofollow, noimageindex", agent: "imgfetch"))
        XCTAssertTrue(RobotsTag.optsOut("max-image-preview: large, noai", agent: "imgfetch"))
    }

    func testOtherDirectivesDoNot() {
        for value in ["", "all", "nofollow", "noarchive, nosnippet", "max-image-preview: large", "index, follow",
                      "unavailable_after: 25 Jun 2010 15:00:00 PST", "noindexing", ","] {
            XCTAssertFalse(RobotsTag.optsOut(value, agent: "imgfetch"), value)
        }
    }

    func testAScopeAppliesOnlyToItsAgent() {
        XCTAssertFalse(RobotsTag.optsOut("otherbot: noindex", agent: "imgfetch"))
        XCTAssertFalse(RobotsTag.optsOut("googlebot: noai, noimageai", agent: "imgfetch"))
        XCTAssertTrue(RobotsTag.optsOut("imgfetch: noai", agent: "imgfetch"))
        XCTAssertTrue(RobotsTag.optsOut("ImgFetch: none", agent: "imgfetch"))
        XCTAssertFalse(RobotsTag.optsOut("imgfetch: nofollow", agent: "imgfetch"))
    }

    func testTheFirstOptingOutFieldIsNamed() {
        let fields = [HeaderField(name: "x-robots-tag", value: "otherbot: noindex"),
                      HeaderField(name: "content-type", value: "image/jpeg"),
                      HeaderField(name: "x-robots-tag", value: "noimageai")]
        XCTAssertEqual(RobotsTag.optOut(in: fields, agent: "imgfetch"), "noimageai")
        XCTAssertNil(RobotsTag.optOut(in: [fields[0], fields[1]], agent: "imgfetch"))
        XCTAssertNil(RobotsTag.optOut(in: [HeaderField(name: "robots", value: "noai")], agent: "imgfetch"))
    }

    func testMergedFieldsScopeEachAgentsDirectives() {
        XCTAssertTrue(RobotsTag.optsOut("otherbot: nofollow, imgfetch: noai", agent: "imgfetch"))
        XCTAssertFalse(RobotsTag.optsOut("imgfetch: nofollow, otherbot: noai", agent: "imgfetch"))
        XCTAssertTrue(RobotsTag.optsOut("otherbot: nofollow, noindex", agent: "imgfetch") == false,
                      "a directive after another agent's name belongs to that agent")
        XCTAssertFalse(RobotsTag.optsOut("unavailable_after: Monday, 25-Jun-2010 15:00:00 PST", agent: "imgfetch"))
    }
}
