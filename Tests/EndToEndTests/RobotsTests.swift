import Foundation
import XCTest

/// `--robots` against the test server, which serves `/robots.txt` from its root (see
/// `Scripts/test-support/test_server.py`): rules applied with no request for a disallowed URL, one fetch per
/// host and then the cache index, and RFC 9309's answers to a missing, failing or looping file.
final class RobotsTests: EndToEndTestCase {
    private func jsonResults(_ execution: Execution) throws -> [String: [String: Any]] {
        var byURL: [String: [String: Any]] = [:]
        for line in execution.stdout.split(separator: "\n") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            byURL[object["url"] as? String ?? ""] = object
        }
        return byURL
    }

    private func writeRobots(_ text: String, daysOld: Double = 2) throws {
        try server.addFile("robots.txt", Data(text.utf8))
        try server.setModificationDate(of: "robots.txt", daysAgo: daysOld)
    }

    private func robotsRequests() throws -> Int { try server.requests(to: "/robots.txt").count }

    func testDisallowedURLsAreSkippedWithoutARequestAndTheRestIsFetched() throws {
        _ = try addJPEG("a.jpg")
        _ = try server.addFile("private-1.jpg", try server.fileData("a.jpg"))
        try writeRobots("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /files/private\n")
        let allowed = server.url("/files/a.jpg")
        let disallowed = server.url("/files/private-1.jpg")
        let run = try fetch([allowed, disallowed], ["--robots", "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let results = try jsonResults(run)
        XCTAssertEqual(results[allowed]?["status"] as? String, "saved")
        XCTAssertEqual(results[disallowed]?["status"] as? String, "skipped")
        XCTAssertEqual(results[disallowed]?["skip_reason"] as? String, "robots.txt: Disallow: /files/private (User-agent: *)")
        XCTAssertEqual(try server.requests(to: "/files/private").count, 0, "a disallowed URL was requested")
        XCTAssertEqual(try robotsRequests(), 1)
        XCTAssertEqual(try server.requests().first?.path, "/robots.txt", "robots.txt comes before the host's first image")
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
    }

    func testTheHumanAndTabLinesSayWhy() throws {
        try writeRobots("User-agent: imgfetch\nDisallow: /files/\n")
        let url = server.url("/files/x.jpg")
        let run = try fetch([url], ["--robots"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(run.stdout, "skipped\t\(url)\trobots.txt: Disallow: /files/ (User-agent: imgfetch)\n")
    }

    func testRobotsTxtIsFetchedOncePerHostAndKeptInTheIndex() throws {
        _ = try addJPEG("a.jpg")
        try writeRobots("User-agent: *\nDisallow: /files/no\n")
        let lines = (0..<20).map { server.url("/files/a.jpg?n=\($0) out=a\($0).jpg") } + [server.url("/files/no.jpg")]
        let first = try fetch(lines, ["--robots", "-j", "8"])
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        XCTAssertEqual(try robotsRequests(), 1, "robots.txt fetched more than once for one host")

        // No Cache-Control or Expires: the index keeps it for a day, and the second run asks the index, not the host.
        let second = try fetch(lines, ["--robots", "--overwrite"])
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(try robotsRequests(), 1, "the second run did not use the index's robots.txt")
        XCTAssertTrue(second.stdout.contains("skipped\t\(server.url("/files/no.jpg"))\trobots.txt: Disallow: /files/no"), second.stdout)
    }

    func testARobotsTxtThatIsNotForIndexingIsStillObeyed() throws {
        try writeRobots("User-agent: *\nDisallow: /\n")
        try Data().write(to: server.root.appendingPathComponent("robots.noindex"))
        let url = server.url("/files/a.jpg")
        let run = try fetch([url], ["--robots"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(run.stdout, "skipped\t\(url)\trobots.txt: Disallow: / (User-agent: *)\n")
    }

    func testWithoutTheOptionNoRobotsTxtIsAsked() throws {
        _ = try addJPEG("a.jpg")
        try writeRobots("User-agent: *\nDisallow: /\n")
        let run = try fetch([server.url("/files/a.jpg")])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try robotsRequests(), 0)
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
    }

    func testA5xxDisallowsTheWholeHostAndA4xxAllowsIt() throws {
        _ = try addJPEG("a.jpg")
        try Data("503".utf8).write(to: server.root.appendingPathComponent("robots.status"))
        let url = server.url("/files/a.jpg")
        let failing = try fetch([url], ["--robots", "--retries", "0"])
        XCTAssertEqual(failing.exitCode, 0, failing.stderr)
        XCTAssertTrue(failing.stdout.contains("skipped\t\(url)\trobots.txt answered HTTP 503, so the host allows nothing (RFC 9309)"),
                      failing.stdout)
        XCTAssertEqual(try server.requests(to: "/files/").count, 0)

        try Data("404".utf8).write(to: server.root.appendingPathComponent("robots.status"))
        let missing = try fetch([url], ["--robots"])
        XCTAssertEqual(missing.exitCode, 0, missing.stderr)
        XCTAssertTrue(missing.stdout.hasPrefix("saved\t"), missing.stdout)
    }

    func testARedirectLoopAllowsAndAnUnreachableHostsItemsFail() throws {
        _ = try addJPEG("a.jpg")
        try Data().write(to: server.root.appendingPathComponent("robots.redirect"))
        let looping = try fetch([server.url("/files/a.jpg")], ["--robots"])
        XCTAssertEqual(looping.exitCode, 0, looping.stderr)
        XCTAssertTrue(looping.stdout.hasPrefix("saved\t"), looping.stdout)
        XCTAssertLessThanOrEqual(try robotsRequests(), 11, "the loop was followed without end")

        let closed = try freeLoopbackPort()
        let unreachable = "http://127.0.0.1:\(closed)/a.jpg"
        let down = try fetch([unreachable], ["--robots", "--retries", "0", "--jsonl"])
        XCTAssertEqual(down.exitCode, 1)
        let result = try XCTUnwrap(try jsonResults(down)[unreachable])
        XCTAssertEqual(result["status"] as? String, "failed")
        let error = try XCTUnwrap(result["error"] as? [String: Any])
        XCTAssertEqual(error["class"] as? String, "network")
        XCTAssertTrue((error["message"] as? String ?? "").contains("robots.txt could not be fetched (could not connect"), down.stdout)
    }

    func testAHugeOrBinaryRobotsTxtIsReadOnlyAsFarAsItCounts() throws {
        _ = try addJPEG("a.jpg")
        let padding = String(repeating: "# a long comment line to pad the file well past the limit\n", count: 12_000)
        try writeRobots("User-agent: *\nDisallow: /files/early\n" + padding + "Disallow: /\n")
        let huge = try fetch([server.url("/files/a.jpg"), server.url("/files/early.jpg")], ["--robots"])
        XCTAssertEqual(huge.exitCode, 0, huge.stderr)
        XCTAssertTrue(huge.stdout.contains("saved\t\(server.url("/files/a.jpg"))"), "a rule past 500 KiB applied:\n\(huge.stdout)")
        XCTAssertTrue(huge.stdout.contains("skipped\t\(server.url("/files/early.jpg"))"), huge.stdout)

        try server.addFile("robots.txt", Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }))
        try server.setModificationDate(of: "robots.txt", daysAgo: 0)
        let binary = try fetch([server.url("/files/a.jpg")], ["--robots", "--overwrite", "--cache-policy", "reload"])
        XCTAssertEqual(binary.exitCode, 0, binary.stderr)
        XCTAssertTrue(binary.stdout.hasPrefix("saved\t"), binary.stdout)
    }
}
