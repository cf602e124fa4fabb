import Foundation
import XCTest

/// Issue 17's behaviours against the real test server: per-host rate, host pauses, the breaker,
/// the deadline. Timings are asserted only as lower bounds the client controls (gaps between its
/// own requests) or as generous upper bounds, so a loaded machine does not fail them.
final class GoodCitizenTests: EndToEndTestCase {
    private func jsonResults(_ execution: Execution) throws -> [[String: Any]] {
        try execution.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    private func errorClass(_ result: [String: Any]) -> String? {
        (result["error"] as? [String: Any])?["class"] as? String
    }

    private func errorMessage(_ result: [String: Any]) -> String {
        (result["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    private func hostName(_ request: LoggedRequest) -> String {
        String((request.header("Host") ?? "").split(separator: ":").first ?? "")
    }

    func testRatePerHostSpacesEachHostsRequestsAndLetsHostsInterleave() throws {
        _ = try addJPEG("a.jpg")
        let hosts = ["one.test", "two.test"]
        let lines = hosts.flatMap { host in (0..<5).map { "http://\(host):\(server.port)/files/a.jpg?n=\($0) out=\(host)-\($0).jpg" } }
        let resolve = hosts.flatMap { ["--resolve", "\($0):\(server.port):127.0.0.1"] }
        let started = Date()
        let run = try fetch(lines, ["--rate-per-host", "4"] + resolve)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let requests = try server.requests(to: "/files/a.jpg")
        XCTAssertEqual(requests.count, 10)
        for host in hosts {
            let times = requests.filter { hostName($0) == host }.map(\.time).sorted()
            XCTAssertEqual(times.count, 5)
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            // 4 per second: 0.25 s apart; the server stamps arrival, so allow a little jitter.
            XCTAssertGreaterThanOrEqual(gaps.min() ?? 0, 0.2, "\(host): gaps \(gaps)")
        }
        // Both hosts run side by side: five requests each at 4/s take about 1 s, not 2.
        XCTAssertLessThan(elapsed, 1.9 + 3, "the hosts waited for each other")
        let first = requests.map(\.time).min()!
        let secondHostStart = requests.filter { hostName($0) == "two.test" }.map(\.time).min()!
        XCTAssertLessThan(secondHostStart - first, 0.2, "the second host did not wait for the first one's tokens")
    }

    func testA503WithRetryAfterPausesTheWholeHostWhileOthersGoOn() throws {
        _ = try addJPEG("a.jpg")
        let port = server.port
        // One connection per host, so every request after the 503 is a new one to the paused host.
        let lines = ["http://slow.test:\(port)/retry-after/1/2/pause-key/files/a.jpg out=first.jpg"]
            + (0..<3).map { "http://slow.test:\(port)/files/a.jpg?n=\($0) out=slow-\($0).jpg" }
            + (0..<3).map { "http://other.test:\(port)/delay/0.3/files/a.jpg?n=\($0) out=other-\($0).jpg" }
        let run = try fetch(lines, ["--per-host", "1", "-j", "2", "--jsonl",
                                    "--resolve", "slow.test:\(port):127.0.0.1", "--resolve", "other.test:\(port):127.0.0.1"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let requests = try server.requests()
        let slow = requests.filter { hostName($0) == "slow.test" }.sorted { $0.time < $1.time }
        XCTAssertEqual(slow.count, 5, "the 503, its retry and three other items")
        XCTAssertTrue(slow[0].path.hasPrefix("/retry-after/"))
        let pausedAt = slow[0].time
        for request in slow.dropFirst() {
            XCTAssertGreaterThanOrEqual(request.time - pausedAt, 1.9, "\(request.path) went to the host during its pause")
        }
        let other = requests.filter { hostName($0) == "other.test" }
        XCTAssertTrue(other.contains { $0.time - pausedAt < 1.9 }, "the other host was held up by the pause")
    }

    func testAHostThatAlwaysAnswers429GivesUpInBoundedTime() throws {
        let port = server.port
        let lines = (0..<8).map { "http://\("127.0.0.1"):\(port)/fail/1000/429/storm-\($0)/files/a.jpg out=s\($0).jpg" }
        let started = Date()
        let run = try fetch(lines, ["--host-failures", "3", "--jsonl", "-q"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(run.exitCode, 1)
        let results = try jsonResults(run)
        XCTAssertEqual(results.count, 8)
        XCTAssertTrue(results.allSatisfy { ($0["status"] as? String) == "failed" && errorClass($0) == "http" })
        XCTAssertTrue(results.contains { errorMessage($0).contains("asked to slow down 3 times in a row") }, run.stdout)
        // Pauses of 0.5, 1 and 2 s, then every remaining item fails at once.
        XCTAssertLessThan(elapsed, 20, "no bound on a 429 storm")
        XCTAssertLessThanOrEqual(try server.requests().count, 8 * 3)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testTheBreakerFailsARefusingHostsItemsFastNamingTheRealError() throws {
        let closed = try freeLoopbackPort()
        let lines = (0..<20).map { "http://127.0.0.1:\(closed)/img\($0).jpg" }
        let run = try fetch(lines, ["--jsonl", "-q"])
        XCTAssertEqual(run.exitCode, 1)
        let results = try jsonResults(run)
        XCTAssertEqual(results.count, 20)
        let unreachable = results.filter { errorClass($0) == "host-unreachable" }
        XCTAssertGreaterThanOrEqual(unreachable.count, 14, run.stdout)
        XCTAssertTrue(unreachable.allSatisfy { errorMessage($0).contains("connection refused") }, run.stdout)
        XCTAssertTrue(unreachable.allSatisfy { errorMessage($0).contains("--host-failures") })
        let attempts = results.map { $0["attempts"] as? Int ?? 0 }.reduce(0, +)
        // Five failures trip it; at most the six connections already trying add to them.
        XCTAssertLessThanOrEqual(attempts, 5 + 6, "items kept trying a host that refuses: \(attempts) attempts")
    }

    func testHostFailuresZeroKeepsTryingEveryItem() throws {
        let closed = try freeLoopbackPort()
        let lines = (0..<3).map { "http://127.0.0.1:\(closed)/img\($0).jpg" }
        let run = try fetch(lines, ["--jsonl", "-q", "--host-failures", "0", "--retries", "1"])
        let results = try jsonResults(run)
        XCTAssertEqual(results.count, 3)
        XCTAssertTrue(results.allSatisfy { errorClass($0) == "network" && ($0["attempts"] as? Int) == 2 }, run.stdout)
    }

    func testTheDeadlineEndsTheRunWithinASecondAndLeavesNothingPartial() throws {
        _ = try addJPEG("a.jpg")
        let lines = [server.url("/files/a.jpg")] + (0..<4).map { server.url("/hang?n=\($0)") }
            + (0..<3).map { server.url("/drip/100/files/a.jpg?n=\($0)") }
        let started = Date()
        let run = try fetch(lines, ["--deadline", "2", "--jsonl"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertLessThan(elapsed, 2 + 1 + 0.5, "the run outlived its deadline by more than a second")
        XCTAssertTrue(run.stderr.contains("deadline of 2 s passed (--deadline)"), run.stderr)
        let results = try jsonResults(run)
        XCTAssertEqual(results.count, 8, "every admitted item has a result line")
        XCTAssertEqual(results.filter { ($0["status"] as? String) == "saved" }.count, 1)
        let late = results.filter { errorClass($0) == "deadline" }
        XCTAssertEqual(late.count, 7, run.stdout)
        XCTAssertTrue(late.allSatisfy { errorMessage($0).contains("--deadline") })
        XCTAssertEqual(try outputFiles(), ["a.jpg"], "a partial file or temp file was left behind")
    }

    func testTheDefaultUserAgentNamesImgfetchAndAContactURL() throws {
        _ = try addJPEG("a.jpg")
        let run = try fetch([server.url("/files/a.jpg")])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let agent = try XCTUnwrap(server.requests(to: "/files/a.jpg").first?.header("User-Agent"))
        XCTAssertTrue(agent.hasPrefix("imgfetch/"), agent)
        XCTAssertTrue(agent.hasSuffix("(+https://imgfetch.invalid/)"), agent)
    }
}

/// `X-Robots-Tag` opt-outs, with the test server counting the body bytes it got to send.
final class OptOutTests: EndToEndTestCase {
    private let bigBody = 32 << 20

    func testAnOptOutIsRefusedBeforeTheBodyIsRead() throws {
        let url = server.url("/header/X-Robots-Tag/noimageai/big/\(bigBody)")
        let run = try fetch([url + " out=big.jpg"], ["--no-decode", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains("\"class\":\"opt-out\""), run.stdout)
        XCTAssertTrue(run.stdout.contains("X-Robots-Tag: noimageai"), run.stdout)
        XCTAssertTrue(run.stdout.contains("--ignore-opt-out"), run.stdout)
        XCTAssertEqual(try outputFiles(), [])
        XCTAssertEqual(try server.requests(to: "/header/").count, 1, "an opt-out is not retried")
        var sent = 0
        XCTAssertTrue(eventually(timeout: 10) {
            sent = (try? server.sentBodies().first { $0.path.hasPrefix("/header/") }?.bytes) ?? -1
            return sent >= 0
        })
        // What the socket buffers took before imgfetch hung up: far from the whole body.
        XCTAssertLessThan(sent, bigBody / 2, "the body was read: \(sent) of \(bigBody) bytes sent")
    }

    func testIgnoreOptOutFetchesItAndOtherAgentsScopesDoNotApply() throws {
        _ = try addJPEG("a.jpg")
        let optedOut = server.url("/header/X-Robots-Tag/noai/files/a.jpg")
        let otherAgent = server.url("/header/X-Robots-Tag/\("otherbot%3A%20noindex")/files/a.jpg")
        let refused = try fetch([optedOut + " out=one.jpg", otherAgent + " out=two.jpg"], ["--jsonl"])
        XCTAssertEqual(refused.exitCode, 1)
        XCTAssertEqual(try outputFiles(), ["two.jpg"], "a directive for another agent was applied")

        let ignored = try fetch([optedOut + " out=one.jpg"], ["--ignore-opt-out"])
        XCTAssertEqual(ignored.exitCode, 0, ignored.stderr)
        XCTAssertEqual(try outputFiles(), ["one.jpg", "two.jpg"])
    }
}

/// `Retry-After` values a server should not send: each still gives a bounded, short pause.
final class RetryAfterEdgeTests: EndToEndTestCase {
    func testAPastDateOrANegativeValueCountsAsNoRetryAfter() throws {
        _ = try addJPEG("a.jpg")
        let lines = [server.url("/retry-after-date/1/-3600/past-date/files/a.jpg out=one.jpg"),
                     server.url("/retry-after/1/-5/negative/files/a.jpg out=two.jpg")]
        let started = Date()
        let run = try fetch(lines, ["--per-host", "1"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try outputFiles(), ["one.jpg", "two.jpg"])
        // Two pauses of the base backoff (0.5 s, then 1 s) and two retries, not an hour.
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
        XCTAssertEqual(try server.requests(to: "/retry-after").count, 4)
    }
}
