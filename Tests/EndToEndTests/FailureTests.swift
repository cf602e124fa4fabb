import Foundation
import XCTest

/// Failures are explained on their own line, leave nothing behind, and do not disturb the other items.
final class FailureTests: EndToEndTestCase {
    func testA404AndATimeoutFailBesideSuccessfulItems() throws {
        let data = try addJPEG("ok.jpg")
        let ok = server.url("/files/ok.jpg")
        let missing = server.url("/status/404")
        let slow = server.url("/drip/1/files/ok.jpg")
        let result = try fetch([ok, missing, slow], ["--timeout", "1", "--retries", "0"])

        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: ok)?[0], "saved")
        XCTAssertEqual(result.result(for: missing), ["failed", missing, "HTTP 404"])
        XCTAssertEqual(result.result(for: slow)?[0], "failed")
        XCTAssertTrue(result.result(for: slow)?[2].contains("timed out") ?? false, result.stdout)
        XCTAssertTrue(result.stderr.contains("failed \(missing): HTTP 404"), result.stderr)
        XCTAssertEqual(try outputFiles(), ["ok.jpg"])
        XCTAssertEqual(try outputData("ok.jpg"), data)
    }

    func test404IsNotRetried() throws {
        let url = server.url("/status/404")
        let result = try fetch([url], ["--retries", "3"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(try server.requests(to: "/status/404").count, 1)
    }

    func testRetriesA503HonoringRetryAfter() throws {
        let data = try addJPEG("r.jpg")
        let url = server.url("/retry-after/2/1/k503/files/r.jpg")
        let result = try fetch([url], ["--retries", "2"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputData("r.jpg"), data)
        let requests = try server.requests(to: "/retry-after/")
        XCTAssertEqual(requests.count, 3)
        // Retry-After: 1 means the next attempt waits at least a second (the log's own clock).
        for (earlier, later) in zip(requests, requests.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later.time - earlier.time, 0.95)
        }
    }

    func testRetriesRunOutAndReportTheAttempts() throws {
        let url = server.url("/fail/10/500/k500/files/none.jpg")
        let result = try fetch([url], ["--retries", "2"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: url)?[2], "HTTP 500")
        XCTAssertTrue(result.stderr.contains("HTTP 500 (after 3 attempts)"), result.stderr)
        XCTAssertEqual(try server.requests(to: "/fail/").count, 3)
    }

    func testTruncatedBodyLeavesNoFile() throws {
        _ = try addJPEG("t.jpg")
        let url = server.url("/truncate/200/files/t.jpg")
        let result = try fetch([url], ["--retries", "0"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: url)?[2].contains("shorter than announced") ?? false, result.stdout)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testConnectionResetLeavesNoFile() throws {
        _ = try addJPEG("t.jpg")
        let url = server.url("/reset/300/files/t.jpg")
        let result = try fetch([url], ["--retries", "1"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(try server.requests(to: "/reset/").count, 2)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testBodyOverMaxSizeIsCutWithoutContentLength() throws {
        let url = server.url("/bigstream/3000000")
        let result = try fetch([url], ["--max-size", "1M"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: url)?[2], "body exceeds --max-size (1048576 bytes)")
        XCTAssertEqual(try outputFiles(), [])
    }

    func testContentLengthOverMaxSizeIsRefused() throws {
        let url = server.url("/big/3000000")
        let result = try fetch([url], ["--max-size", "1M"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: url)?[2].contains("exceeds --max-size") ?? false, result.stdout)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testNonImageBodyIsRejected() throws {
        let url = server.url("/type/image%2Fjpeg/echo-headers")
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: url)?[2], "not an image: looks like JSON")
        XCTAssertEqual(try outputFiles(), [])
    }

    /// A JPEG served whole by HTTP's measure (its Content-Length) but cut off in the image: class
    /// `truncated`, apart from a body that is no image at all, and said so in the summary.
    func testACutOffImageIsTruncatedNotNotAnImage() throws {
        let jpeg = try addJPEG("whole.jpg")
        try server.addFile("cut.jpg", jpeg.prefix(jpeg.count / 2))
        let cut = server.url("/files/cut.jpg")
        let result = try fetch([cut, server.url("/type/image%2Fjpeg/echo-headers")], ["--jsonl"])
        XCTAssertEqual(result.exitCode, 1)
        let classes = result.stdout.split(separator: "\n").compactMap { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["error"] as? [String: Any])?["class"] as? String
        }
        // Results come as transfers end, in either order.
        XCTAssertEqual(classes.sorted(), ["not-an-image", "truncated"])
        XCTAssertTrue(result.stderr.contains("2 failed (1 not-an-image, 1 truncated)"), result.stderr)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testRedirectLoopFails() throws {
        let url = server.url("/loop/x")
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: url)?[2], "too many redirects (more than 10)")
    }

    func testRedirectToAnotherSchemeIsRefused() throws {
        let url = server.url("/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd")
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: url)?[2].contains("redirect to file: refused") ?? false, result.stdout)
    }

    func testConnectionRefused() throws {
        // A port that was free a moment ago: nothing listens there.
        let closed = try TestServer()
        let url = closed.url("/files/x.jpg")
        closed.stop()
        let result = try fetch([url], ["--retries", "0"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: url)?[2].hasPrefix("could not connect") ?? false, result.stdout)
    }

    func testBadListLinesAreReportedWithTheirLineNumbers() throws {
        _ = try addJPEG("ok.jpg")
        let list = [
            "# comment",
            "",
            "ftp://example.com/a.jpg",
            server.url("/files/ok.jpg"),
            "not a url",
            server.url("/files/ok.jpg") + " out=../escape.jpg",
            server.url("/files/ok.jpg") + " colour=red",
        ]
        let result = try fetch(list)
        XCTAssertEqual(result.exitCode, 1)
        let listPath = scratch.file("urls.txt").path
        XCTAssertTrue(result.stderr.contains("\(listPath):3: unsupported scheme 'ftp'"), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(listPath):5: "), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(listPath):6: out=../escape.jpg must be a plain file name"), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(listPath):7: unknown field 'colour='"), result.stderr)
        XCTAssertEqual(result.results.filter { $0[0] == "failed" }.count, 4)
        XCTAssertEqual(result.results.filter { $0[0] == "saved" }.count, 1)
        XCTAssertEqual(try outputFiles(), ["ok.jpg"])
    }
}
