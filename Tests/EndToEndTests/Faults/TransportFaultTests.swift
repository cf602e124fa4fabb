import Foundation
import XCTest

/// Issue 6, Transport: broken and hostile servers, against the built binary.
///
/// Every case runs beside a good URL and checks the one-line error on stdout and stderr, the
/// report's error class and attempt count, an output directory that holds nothing but the good
/// image (no temp file), and the exit code. Redirects and credentials, HTTP statuses and secrets,
/// and TLS are in the `TransportFaultTests+*.swift` files beside this one.
final class TransportFaultTests: EndToEndTestCase {
    /// Fetched in every run; it must come through whatever its neighbours do.
    var goodURL: String!
    /// The bytes of the good image (a real JPEG), also served under other names.
    var jpeg: Data!

    /// A real sample JPEG, made once per test process (the generator is a Python start-up away).
    static let sampleJPEG = Result { () throws -> Data in
        let maker = try TestServer()
        defer { maker.stop() }
        let name = try XCTUnwrap(maker.addSamples(count: 1, seed: 7).first { $0.hasSuffix(".jpg") })
        return try maker.fileData(name)
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        jpeg = try Self.sampleJPEG.get()
        try server.addFile("good.jpg", jpeg)
        goodURL = server.url("/files/good.jpg")
    }

    override class func tearDown() {
        SelfSignedCertificate.remove(SelfSignedCertificate.shared)
        super.tearDown()
    }

    // MARK: - Framing

    func testBodyShorterThanContentLengthThenClose() throws {
        try serve("a.jpg")
        let url = server.url("/truncate/200/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--retries", "1"])
        assertFailed(run, url, "body shorter than announced (connection closed early): transfer closed with 3718 bytes remaining to read",
                     kind: "network", attempts: 2)
    }

    func testChunkedBodyCutOff() throws {
        try serve("a.jpg")
        let url = server.url("/chunked/truncate/200/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--retries", "1"])
        assertFailed(run, url, "chunked body cut off: the connection closed before the last chunk", kind: "network", attempts: 2)
    }

    func testConnectionResetMidBody() throws {
        try serve("a.jpg")
        let url = server.url("/reset/300/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--retries", "1"])
        assertFailed(run, url, "connection reset by the server", kind: "network", attempts: 2)
    }

    func testEmptyReply() throws {
        let url = server.url("/empty")
        let run = try fetchBesideGoodURL([url], ["--retries", "1"])
        assertFailed(run, url, "empty reply from server", kind: "network", attempts: 2)
    }

    func testGarbageStatusLine() throws {
        try serve("a.jpg")
        let words = server.url("/status-line/GARBAGE%20IN%20GARBAGE%20OUT/files/a.jpg")
        let binary = server.url("/status-line/%00%01%FE%FF%0B/files/a.jpg")
        let badCode = server.url("/status-line/HTTP%2F1.1%202000%20OK/files/a.jpg")
        let badVersion = server.url("/status-line/HTTP%2F1.1%20abc%20OK/files/a.jpg")
        let run = try fetchBesideGoodURL([words, binary, badCode, badVersion], ["--retries", "2"])
        // A malformed reply is not transient: never retried.
        assertFailed(run, words, "invalid HTTP response: no valid status line", kind: "network", attempts: 1)
        assertFailed(run, binary, "invalid HTTP response: no valid status line", kind: "network", attempts: 1)
        assertFailed(run, badCode, "invalid HTTP response: malformed status line (Unsupported response code in HTTP response)",
                     kind: "network", attempts: 1)
        assertFailed(run, badVersion, "invalid HTTP response: malformed status line (", prefix: true, kind: "network", attempts: 1)
    }

    func testConflictingContentLengthHeaders() throws {
        try serve("a.jpg")
        let size = jpeg.count
        let longer = server.url("/content-length/\(size)/content-length/\(size + 1000)/files/a.jpg")
        let shorter = server.url("/content-length/\(size)/content-length/100/files/a.jpg")
        let list = server.url("/content-length/\(size)%2C%20\(size + 1)/files/a.jpg")
        let agreeing = server.url("/content-length/\(size)/content-length/\(size)%2C\(size)/files/a.jpg")
        let run = try fetchBesideGoodURL([longer, shorter, list, agreeing + " out=agreeing.jpg"], ["--retries", "2"],
                                         alsoSaved: ["agreeing.jpg"])
        // libcurl would use the last header (or a list's first number); RFC 9112 says refuse.
        let refused = "invalid HTTP response: conflicting Content-Length headers"
        assertFailed(run, longer, "\(refused) (\(size), \(size + 1000)); refused", kind: "network", attempts: 1)
        assertFailed(run, shorter, "\(refused) (\(size), 100); refused", kind: "network", attempts: 1)
        assertFailed(run, list, "\(refused) (\(size), \(size + 1)); refused", kind: "network", attempts: 1)
        assertSaved(run, agreeing, attempts: 1)
        XCTAssertEqual(try outputData("agreeing.jpg"), jpeg)
    }

    func testInvalidContentLengthHeaders() throws {
        try serve("a.jpg")
        let values = ["abc", "-5", "12abc", "%2B3918", "0x10", "\(jpeg.count)%2C%20abc", ""]
        let urls = values.map { server.url("/content-length/\($0)/files/a.jpg") }
        let run = try fetchBesideGoodURL(urls, ["--retries", "2"])
        for url in urls {
            assertFailed(run, url, "invalid HTTP response: Content-Length header is not a byte count", kind: "network", attempts: 1)
        }
    }

    // MARK: - Size limits

    func testEndlessBodyWithoutContentLengthIsCutAtMaxSize() throws {
        // 64 GiB, close-delimited: only the write callback's count can stop it.
        let url = server.url("/bigstream/68719476736")
        let run = try fetchBesideGoodURL([url], ["--max-size", "1M", "--retries", "2"])
        assertFailed(run, url, "body exceeds --max-size (1048576 bytes)", kind: "too-large", attempts: 1)
    }

    func testContentLengthAboveMaxSizeIsRefusedBeforeTheBody() throws {
        // 64 GiB announced. Had any body been read, the write callback would have cut it with
        // "body exceeds --max-size"; this message comes only from the Content-Length check.
        let url = server.url("/big/68719476736")
        let exact = server.url("/big/1048576")
        let run = try fetchBesideGoodURL([url, exact + " out=exact.jpg"], ["--max-size", "1M", "--retries", "2", "--no-decode"],
                                         alsoSaved: ["exact.jpg"])
        assertFailed(run, url, "Content-Length exceeds --max-size (1048576 bytes)", kind: "too-large", attempts: 1)
        // Exactly --max-size is still accepted.
        assertSaved(run, exact, attempts: 1)
    }

    // MARK: - Stalls

    func testSlowDripIsAbortedByTheTimeout() throws {
        try serve("a.jpg")
        let url = server.url("/drip/1/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--timeout", "1", "--retries", "0"])
        assertFailed(run, url, "timed out: under 1 KB/s for 1 s (--timeout)", kind: "timeout", attempts: 1)
    }

    func testServerThatAcceptsAndNeverAnswersTimesOut() throws {
        let url = server.url("/hang")
        let run = try fetchBesideGoodURL([url], ["--timeout", "1", "--retries", "0"])
        assertFailed(run, url, "timed out: no response for 1 s (--timeout)", kind: "timeout", attempts: 1)
        XCTAssertEqual(try server.requests(to: "/hang").count, 1)
    }

    // MARK: - Headers

    func testHugeResponseHeadersFailClearly() throws {
        try serve("a.jpg")
        let huge = server.url("/headers/300/files/a.jpg")
        let hugeError = server.url("/headers/300/status/404")
        let large = server.url("/headers/90/files/a.jpg")
        let run = try fetchBesideGoodURL([huge, hugeError, large + " out=large.jpg"], ["--retries", "2"], alsoSaved: ["large.jpg"])
        let message = "response headers too large (libcurl accepts at most 100 KiB per header line)"
        assertFailed(run, huge, message, kind: "network", attempts: 1)
        assertFailed(run, hugeError, message, kind: "network", attempts: 1)
        // Under the limit, a big header is just a header.
        assertSaved(run, large, attempts: 1)
    }
}

// MARK: - Shared checks

/// What one run printed, with its `--report` entries by (displayed) URL.
struct FaultRun {
    let execution: Execution
    let report: [String: ReportEntry]
}

/// One line of `--report`, the fields these tests read.
struct ReportEntry: Decodable {
    struct Failure: Decodable {
        let kind: String
        let message: String

        enum CodingKeys: String, CodingKey {
            case kind = "class"
            case message
        }
    }

    let url: String
    let status: String
    let attempts: Int
    let httpStatus: Int?
    let error: Failure?
}

extension TransportFaultTests {
    /// Serves the good JPEG's bytes at `/files/NAME` too.
    func serve(_ name: String) throws {
        try server.addFile(name, jpeg)
    }

    /// Fetches `urls` and then the good URL, with `--report`, and checks what every case shares:
    /// the good image saved intact, nothing but it and `alsoSaved` in the output directory (no
    /// temp file), and the exit code.
    @discardableResult
    func fetchBesideGoodURL(_ urls: [String], _ arguments: [String] = [], alsoSaved: [String] = [], exitCode: Int32 = 1,
                            file: StaticString = #filePath, line: UInt = #line) throws -> FaultRun {
        let reportPath = scratch.file("report.jsonl")
        let execution = try fetch(urls + [goodURL], arguments + ["--report", reportPath.path])
        let output = execution.stdout + execution.stderr
        XCTAssertEqual(execution.exitCode, exitCode, output, file: file, line: line)
        XCTAssertEqual(try outputFiles(), (["good.jpg"] + alsoSaved).sorted(), file: file, line: line)
        XCTAssertEqual(try outputData("good.jpg"), jpeg, file: file, line: line)

        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let lines = try Data(contentsOf: reportPath).split(separator: UInt8(ascii: "\n"))
        let entries = try lines.map { try decoder.decode(ReportEntry.self, from: Data($0)) }
        let report = Dictionary(entries.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(entries.count, urls.count + 1, output, file: file, line: line)
        XCTAssertEqual(report[goodURL]?.status, "saved", output, file: file, line: line)
        if !arguments.contains("--jsonl") {
            XCTAssertEqual(execution.results.count, urls.count + 1, output, file: file, line: line)
            XCTAssertEqual(execution.result(for: goodURL)?.first, "saved", output, file: file, line: line)
        }
        return FaultRun(execution: execution, report: report)
    }

    /// Checks one failed URL: its stdout line `failed URL ERROR` (one line), the stderr line
    /// `failed URL: ERROR` (with `(after N attempts)` when it was retried), and its report entry's
    /// error class, message and attempts. With `prefix`, `error` is the start of the message (the
    /// rest is libcurl's wording).
    func assertFailed(_ run: FaultRun, _ url: String, _ error: String, prefix: Bool = false, kind: String, attempts: Int,
                      file: StaticString = #filePath, line: UInt = #line) {
        let output = run.execution.stdout + run.execution.stderr
        guard let fields = run.execution.result(for: url) else {
            return XCTFail("no result line for \(url)\n\(output)", file: file, line: line)
        }
        XCTAssertEqual(fields.count, 3, "\(fields)", file: file, line: line)
        XCTAssertEqual(fields[0], "failed", "\(fields)", file: file, line: line)
        let message = fields.count > 2 ? fields[2] : ""
        if prefix {
            XCTAssertTrue(message.hasPrefix(error), "\(message) does not start with \(error)", file: file, line: line)
        } else {
            XCTAssertEqual(message, error, file: file, line: line)
        }
        XCTAssertFalse(message.contains("\r"), "one line: \(message)", file: file, line: line)
        let stderrLine = "failed \(url): \(message)" + (attempts > 1 ? " (after \(attempts) attempts)" : "")
        XCTAssertTrue(run.execution.stderr.split(separator: "\n").contains { $0 == stderrLine },
                      "stderr lacks \(stderrLine)\n\(run.execution.stderr)", file: file, line: line)
        let entry = run.report[url]
        XCTAssertEqual(entry?.status, "failed", file: file, line: line)
        XCTAssertEqual(entry?.error?.kind, kind, file: file, line: line)
        XCTAssertEqual(entry?.error?.message, message, file: file, line: line)
        XCTAssertEqual(entry?.attempts, attempts, "attempts of \(url)", file: file, line: line)
    }

    /// Checks that `url` (as the list gives it, fields and all) was saved after `attempts` attempts.
    func assertSaved(_ run: FaultRun, _ url: String, attempts: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(run.execution.result(for: url)?.first, "saved", run.execution.stdout + run.execution.stderr,
                       file: file, line: line)
        XCTAssertEqual(run.report[url]?.attempts, attempts, "attempts of \(url)", file: file, line: line)
    }
}
