import Foundation
import XCTest

/// Issue 6, Transport: HTTP statuses and retries, lying Content-Types, DNS and refused connections,
/// and secrets kept out of every output.
extension TransportFaultTests {
    // MARK: - HTTP errors

    func testClientErrorsFailWithoutRetry() throws {
        let statuses = [400, 401, 403, 404, 410, 451]
        let urls = statuses.map { server.url("/status/\($0)") }
        let run = try fetchBesideGoodURL(urls, ["--retries", "3"])
        for (status, url) in zip(statuses, urls) {
            assertFailed(run, url, "HTTP \(status)", kind: "http", attempts: 1)
            XCTAssertEqual(run.report[url]?.httpStatus, status)
            XCTAssertEqual(try server.requests(to: "/status/\(status)").count, 1)
        }
    }

    func testTransientStatusesAreRetriedThenFailWithTheFinalStatus() throws {
        try serve("a.jpg")
        let statuses = [408, 429, 500, 502, 503, 504]
        let urls = statuses.map { server.url("/fail/10/\($0)/k\($0)/files/a.jpg") }
        let recovers = server.url("/fail/1/502/recover/files/a.jpg")
        let run = try fetchBesideGoodURL(urls + [recovers + " out=recovered.jpg"], ["--retries", "2"], alsoSaved: ["recovered.jpg"])
        for (status, url) in zip(statuses, urls) {
            assertFailed(run, url, "HTTP \(status)", kind: "http", attempts: 3)
            XCTAssertEqual(run.report[url]?.httpStatus, status)
            XCTAssertEqual(try server.requests(to: "/fail/10/\(status)/").count, 3)
        }
        assertSaved(run, recovers, attempts: 2)
    }

    func test429RetryAfterSecondsIsHonored() throws {
        try serve("a.jpg")
        let recovers = server.url("/header/Retry-After/1/fail/1/429/k429/files/a.jpg")
        let keepsFailing = server.url("/header/Retry-After/1/fail/10/429/k429b/files/a.jpg")
        let run = try fetchBesideGoodURL([recovers + " out=a.jpg", keepsFailing], ["--retries", "1"], alsoSaved: ["a.jpg"])
        assertSaved(run, recovers, attempts: 2)
        assertFailed(run, keepsFailing, "HTTP 429", kind: "http", attempts: 2)
        // Retry-After: 1 holds the retry back a second (by the server log's clock); backoff alone waits at most 0.5 s.
        for key in ["k429/", "k429b/"] {
            let times = try server.requests().filter { $0.path.contains(key) }.map(\.time)
            XCTAssertEqual(times.count, 2)
            XCTAssertGreaterThanOrEqual(times[1] - times[0], 0.95)
        }
    }

    func test503RetryAfterHTTPDateIsHonored() throws {
        // FailureTests.testRetriesA503HonoringRetryAfter covers Retry-After in seconds.
        try serve("a.jpg")
        let recovers = server.url("/retry-after-date/1/3/date/files/a.jpg")
        let keepsFailing = server.url("/retry-after-date/10/1/dateb/files/a.jpg")
        let run = try fetchBesideGoodURL([recovers + " out=a.jpg", keepsFailing], ["--retries", "1"], alsoSaved: ["a.jpg"])
        assertSaved(run, recovers, attempts: 2)
        assertFailed(run, keepsFailing, "HTTP 503", kind: "http", attempts: 2)
        // The date is now + 3 s in whole seconds: at least 2 s away, four times the longest first backoff.
        let times = try server.requests(to: "/retry-after-date/1/").map(\.time)
        XCTAssertEqual(times.count, 2)
        XCTAssertGreaterThanOrEqual(times[1] - times[0], 1.5)
    }

    // MARK: - Content-Type lies

    func testHTMLServedAsJPEGIsRejected() throws {
        // FailureTests.testNonImageBodyIsRejected covers JSON served as image/jpeg.
        try server.addFile("page.html", Data("\u{FEFF}\n  <!DOCTYPE html><html><body>Not Found</body></html>\n".utf8))
        let url = server.url("/type/image%2Fjpeg/files/page.html")
        let run = try fetchBesideGoodURL([url])
        assertFailed(run, url, "not an image: looks like HTML", kind: "not-an-image", attempts: 1)
    }

    func testJPEGServedAsTextHTMLIsAccepted() throws {
        try serve("a.jpg")
        let url = server.url("/type/text%2Fhtml%3B%20charset%3Dutf-8/files/a.jpg")
        let run = try fetchBesideGoodURL([url + " out=a.jpg"], alsoSaved: ["a.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        XCTAssertEqual(try outputData("a.jpg"), jpeg)
    }

    // MARK: - DNS and connection refused

    func testDNSFailureIsNotRetried() throws {
        // .invalid never resolves (RFC 6761): the resolver answers NXDOMAIN without asking the network.
        let url = "http://nonexistent.invalid/a.jpg"
        let run = try fetchBesideGoodURL([url], ["--retries", "3"])
        assertFailed(run, url, "could not resolve host nonexistent.invalid", kind: "dns", attempts: 1)
    }

    func testConnectionRefusedIsRetriedAsTransient() throws {
        // FailureTests.testConnectionRefused checks the message without retries.
        let port = try Self.closedLoopbackPort()
        let url = "http://127.0.0.1:\(port)/files/a.jpg"
        let run = try fetchBesideGoodURL([url], ["--retries", "2"])
        assertFailed(run, url, "could not connect to 127.0.0.1 port \(port): connection refused", kind: "network", attempts: 3)
    }

    /// A loopback port that was free a moment ago and has no listener: bound, never listened on, closed.
    static func closedLoopbackPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: - Secrets never in output

    func testSecretsNeverAppearInAnyOutput() throws {
        try serve("a.jpg")
        let authority = "bob:hunter2@127.0.0.1:\(server.port)"
        let list = [
            "http://\(authority)/drip/2000/files/a.jpg",                   // slow enough for progress lines
            "http://\(authority)/status/404",
            "http://bob:hunter2@nonexistent.invalid/a.jpg",
            "http://\(authority)/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Fx",
            "http://\(authority)/type/image%2Fjpeg/echo-headers",           // the body echoes the request's secrets
            "http://bob:hunter2@127.0.0.1:99999/a.jpg",                    // a bad list line
        ]
        let secrets = ["hunter2", "s3cret-pw", "k-secret-123", "c-secret-456",
                       Data("bob:hunter2".utf8).base64EncodedString(), Data("alice:s3cret-pw".utf8).base64EncodedString()]
        let tsv = try fetchBesideGoodURL(list, Self.secretOptions + ["--progress", "plain", "--progress-interval", "0.1"],
                                         alsoSaved: ["a.jpg"])
        let progressLines = tsv.execution.stderr.split(separator: "\n").filter { $0.hasPrefix("imgfetch: ") && $0.contains("/\(list.count + 1) items") }
        XCTAssertFalse(progressLines.isEmpty, "no plain progress lines:\n\(tsv.execution.stderr)")
        let report = try String(contentsOf: scratch.file("report.jsonl"), encoding: .utf8)
        let jsonl = try fetchBesideGoodURL(list, Self.secretOptions + ["--jsonl", "--cache-policy", "reload"], alsoSaved: ["a.jpg"])
        for (name, text) in [("stdout", tsv.execution.stdout), ("stderr", tsv.execution.stderr), ("report", report),
                             ("JSONL stdout", jsonl.execution.stdout), ("JSONL stderr", jsonl.execution.stderr)] {
            for secret in secrets {
                XCTAssertFalse(text.contains(secret), "\(secret) in \(name):\n\(text)")
            }
        }
        let shown = "http://bob:***@127.0.0.1:\(server.port)/status/404"
        assertFailed(tsv, shown, "HTTP 404", kind: "http", attempts: 1)
        assertFailed(tsv, "http://bob:***@nonexistent.invalid/a.jpg", "could not resolve host nonexistent.invalid",
                     kind: "dns", attempts: 1)
        // The secrets did go where they belong.
        XCTAssertEqual(try server.requests(to: "/status/404").first?.header("X-Api-Key"), "k-secret-123")
    }

    func testHeaderValueNeverEchoedInAUsageError() throws {
        let result = try ImgFetchRunner.run(["-H", "X-Api-Key: k-secret-123\r\nX-Evil: 1", "-o", outputDirectory, "-"], stdin: "")
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertEqual(result.stderr.split(separator: "\n").first,
                       "imgfetch: invalid value for '-H': header 'X-Api-Key' must not contain CR or LF")
        XCTAssertFalse(result.stderr.contains("k-secret-123"), result.stderr)
    }
}
