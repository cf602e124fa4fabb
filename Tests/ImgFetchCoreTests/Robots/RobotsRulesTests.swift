import XCTest
@testable import ImgFetchCore

final class RobotsRulesTests: XCTestCase {
    private func rules(_ text: String, agent: String = "imgfetch") -> RobotsRules {
        RobotsRules(parsing: Array(text.utf8), agent: agent)
    }

    private func allowed(_ rules: RobotsRules, _ path: String) -> Bool { rules.disallowingRule(for: path) == nil }

    func testTheAgentsOwnGroupWinsOverTheStarGroup() {
        let parsed = rules("""
            User-agent: *
            Disallow: /

            User-agent: ImgFetch/1.0
            Disallow: /private/
            """)
        XCTAssertEqual(parsed.group, "imgfetch")
        XCTAssertTrue(allowed(parsed, "/public/a.jpg"))
        XCTAssertFalse(allowed(parsed, "/private/a.jpg"))
        XCTAssertEqual(parsed.disallowingRule(for: "/private/a.jpg")?.text, "Disallow: /private/")
    }

    func testTheStarGroupAppliesWhenNoGroupNamesTheAgent() {
        let parsed = rules("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\n")
        XCTAssertEqual(parsed.group, "*")
        XCTAssertFalse(allowed(parsed, "/tmp/x.jpg"))
        XCTAssertTrue(allowed(parsed, "/images/x.jpg"))
    }

    func testGroupsForTheAgentCombineAndSeveralAgentsShareAGroup() {
        let parsed = rules("""
            User-agent: a-bot
            User-agent: imgfetch
            Disallow: /one
            User-agent: imgfetch
            Disallow: /two
            """)
        XCTAssertFalse(allowed(parsed, "/one/x"))
        XCTAssertFalse(allowed(parsed, "/two/x"))
        XCTAssertTrue(allowed(parsed, "/three"))
    }

    func testTheLongestMatchDecidesAndAllowWinsATie() {
        let parsed = rules("User-agent: *\nDisallow: /images\nAllow: /images/public\nAllow: /x\nDisallow: /x\n")
        XCTAssertFalse(allowed(parsed, "/images/secret.jpg"))
        XCTAssertTrue(allowed(parsed, "/images/public/a.jpg"))
        XCTAssertTrue(allowed(parsed, "/x/y"), "equal length: allow wins")
    }

    func testWildcardsAndTheEndAnchor() {
        let parsed = rules("User-agent: *\nDisallow: /*.gif$\nDisallow: /a*/b\n")
        XCTAssertFalse(allowed(parsed, "/pics/cat.gif"))
        XCTAssertTrue(allowed(parsed, "/pics/cat.gif?size=2"), "$ anchors the end")
        XCTAssertFalse(allowed(parsed, "/abc/def/b/x"))
        XCTAssertTrue(allowed(parsed, "/b/a"))
    }

    func testPercentEncodingIsComparedNormalized() {
        let parsed = rules("User-agent: *\nDisallow: /%7Ejoe/\nDisallow: /caf%c3%a9\n")
        XCTAssertFalse(allowed(parsed, "/~joe/a.jpg"))
        XCTAssertFalse(allowed(parsed, "/caf%C3%A9/a.jpg"))
    }

    func testEmptyDisallowCommentsJunkAndRulesBeforeAnyGroupAllow() {
        XCTAssertTrue(allowed(rules("Disallow: /\nUser-agent: *\nDisallow:\n"), "/a"))
        XCTAssertTrue(allowed(rules("# just a comment\n"), "/a"))
        XCTAssertTrue(allowed(rules(""), "/a"))
        let binary = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        XCTAssertTrue(allowed(RobotsRules(parsing: binary, agent: "imgfetch"), "/a"))
        XCTAssertFalse(allowed(rules("User-agent: * # everyone\nDisallow: /a # not this\n"), "/a/b"))
    }

    func testOnlyTheFirst500KiBCount() {
        let padding = String(repeating: "# padding line of a huge robots file\n", count: (RobotsRules.maxBytes / 37) + 10)
        let parsed = rules("User-agent: *\nDisallow: /early\n" + padding + "Disallow: /\n")
        XCTAssertFalse(allowed(parsed, "/early/x"))
        XCTAssertTrue(allowed(parsed, "/late"), "a rule past 500 KiB was applied")
    }

    /// One 5 MB line cut at 500 KiB: the cut rule is dropped, not applied in half (its start would
    /// match every path that begins like it), and a rule quoted in a message is a short excerpt.
    func testALineCutAtTheLimitIsDroppedAndQuotedRulesAreShort() {
        let long = "/" + String(repeating: "a", count: 5_000_000)
        let cut = rules(String("User-agent: *\nDisallow: /private\nDisallow: \(long)\n".prefix(RobotsRules.maxBytes)))
        XCTAssertTrue(allowed(cut, "/aaaa/page.jpg"), "half a rule was applied")
        XCTAssertFalse(allowed(cut, "/private/x.jpg"), "the whole rules before the cut still hold")
        // A file that ends exactly at a line break keeps its last line.
        let text = "User-agent: *\nDisallow: /x\n"
        let padded = String(repeating: "#", count: RobotsRules.maxBytes - text.utf8.count - 1) + "\n" + text
        XCTAssertFalse(allowed(rules(String(padded.utf8.suffix(RobotsRules.maxBytes))!), "/x/1.jpg"))
        // A long rule (whole, under the limit) is quoted as an excerpt.
        let whole = rules("User-agent: *\nDisallow: /" + String(repeating: "é", count: 300) + "\n")
        let quoted = whole.disallowingRule(for: "/" + String(repeating: "é", count: 300) + "/z")?.text ?? ""
        XCTAssertEqual(quoted, "Disallow: /" + String(repeating: "é", count: 39) + "…")
    }

    func testRobotsTxtItselfIsAlwaysAllowed() {
        XCTAssertTrue(allowed(rules("User-agent: *\nDisallow: /\n"), "/robots.txt"))
        XCTAssertEqual(RobotsGate.verdict(.disallowAll("down"), "/robots.txt"), .allowed)
        XCTAssertEqual(RobotsGate.verdict(.disallowAll("down"), "/a.jpg"), .disallowed("down"))
    }

    func testPathAndQueryOfANormalizedURL() {
        XCTAssertEqual(RobotsGate.pathAndQuery(of: "http://a.example/x/y.jpg?q=1"), "/x/y.jpg?q=1")
        XCTAssertEqual(RobotsGate.pathAndQuery(of: "https://u:p@a.example:8443/"), "/")
        XCTAssertEqual(RobotsGate.pathAndQuery(of: "http://a.example?q"), "/?q")
        XCTAssertEqual(RobotsGate.pathAndQuery(of: "http://[::1]:8080/p"), "/p")
    }

    func testAPathologicalPatternStaysCheap() {
        let parsed = rules("User-agent: *\nDisallow: /" + String(repeating: "*a", count: 200) + "b\n")
        let path = "/" + String(repeating: "a", count: 2000)
        XCTAssertTrue(allowed(parsed, path))
    }

    func testAByteOrderMarkDoesNotHideTheFirstGroup() {
        let parsed = RobotsRules(parsing: [0xEF, 0xBB, 0xBF] + Array("User-agent: *\nDisallow: /\n".utf8), agent: "imgfetch")
        XCTAssertFalse(allowed(parsed, "/a.jpg"))
    }
}
