import Foundation
import XCTest
import ImgFetchCore
@testable import ImgFetchCLI

final class RunReporterTests: XCTestCase {
    private let stdout = BufferSink()
    private let stderr = BufferSink()
    private let position = ListPosition(listName: "list.txt", line: 7)

    // MARK: - Result lines

    func testSavedLine() {
        reporter().report(item("http://example.com/cat.jpg", DownloadResult(status: .saved, paths: ["out/cat.jpg"])))
        XCTAssertEqual(stdout.text, "saved\thttp://example.com/cat.jpg\tout/cat.jpg\n")
        XCTAssertEqual(stderr.text, "")
    }

    func testSkippedLine() {
        reporter().report(item("http://example.com/cat.jpg", DownloadResult(status: .skipped, paths: ["out/cat.jpg"])))
        XCTAssertEqual(stdout.text, "skipped\thttp://example.com/cat.jpg\tout/cat.jpg\n")
        XCTAssertEqual(stderr.text, "")
    }

    func testSavedWithSeveralPaths() {
        reporter().report(item("http://example.com/cat.jpg", DownloadResult(status: .saved, paths: ["out/cat.jpg", "out/cat.png"])))
        XCTAssertEqual(stdout.text, "saved\thttp://example.com/cat.jpg\tout/cat.jpg out/cat.png\n")
    }

    func testFailedAfterOneAttempt() {
        let result = DownloadResult.failed(DownloadError(.http, "HTTP 404 Not Found"), attempts: 1, httpStatus: 404)
        reporter().report(item("http://example.com/missing.jpg", result))
        XCTAssertEqual(stdout.text, "failed\thttp://example.com/missing.jpg\tHTTP 404 Not Found\n")
        XCTAssertEqual(stderr.text, "failed http://example.com/missing.jpg: HTTP 404 Not Found\n")
    }

    func testFailedWithoutAnyAttempt() {
        let result = DownloadResult.failed(DownloadError(.filesystem, "cannot write out/x.jpg: Permission denied"))
        reporter().report(item("http://example.com/x.jpg", result))
        XCTAssertEqual(stderr.text, "failed http://example.com/x.jpg: cannot write out/x.jpg: Permission denied\n")
    }

    func testFailedAfterSeveralAttemptsSaysHowMany() {
        let result = DownloadResult.failed(DownloadError(.http, "HTTP 503 Service Unavailable"), attempts: 3, httpStatus: 503)
        reporter().report(item("http://example.com/busy.jpg", result))
        XCTAssertEqual(stdout.text, "failed\thttp://example.com/busy.jpg\tHTTP 503 Service Unavailable\n")
        XCTAssertEqual(stderr.text, "failed http://example.com/busy.jpg: HTTP 503 Service Unavailable (after 3 attempts)\n")
    }

    func testInvalidInputIsPrefixedWithFileAndLine() {
        let result = DownloadResult.failed(DownloadError(.invalidInput, "unknown field 'size=' (expected out= or priority=)"))
        reporter().report(item("http://example.com/a.jpg", result))
        XCTAssertEqual(stdout.text, "failed\thttp://example.com/a.jpg\tlist.txt:7: unknown field 'size=' (expected out= or priority=)\n")
        XCTAssertEqual(stderr.text, "list.txt:7: unknown field 'size=' (expected out= or priority=)\n")
    }

    func testInvalidInputWithEmptyURL() {
        let result = DownloadResult.failed(DownloadError(.invalidInput, "line longer than 16384 bytes"))
        reporter().report(ItemReport(position: ListPosition(listName: "<stdin>", line: 12), displayURL: "", result: result))
        XCTAssertEqual(stdout.text, "failed\t\t<stdin>:12: line longer than 16384 bytes\n")
        XCTAssertEqual(stderr.text, "<stdin>:12: line longer than 16384 bytes\n")
    }

    func testTabsAndLineBreaksInFieldsAreReplaced() {
        let result = DownloadResult.failed(DownloadError(.network, "first line\nsecond\tpart\rend"), attempts: 2)
        reporter().report(item("http://example.com/a\tb\nc.jpg", result))
        XCTAssertEqual(stdout.text, "failed\thttp://example.com/a b c.jpg\tfirst line second part end\n")
        XCTAssertEqual(stderr.text, "failed http://example.com/a b c.jpg: first line second part end (after 2 attempts)\n")
    }

    func testCRLFInAFieldIsReplaced() {
        // Swift reads "\r\n" as one Character, equal to neither "\r" nor "\n".
        let result = DownloadResult.failed(DownloadError(.http, "HTTP 500\r\nInternal Server Error"), attempts: 2)
        reporter().report(item("http://example.com/a.jpg", result))
        XCTAssertFalse(stdout.text.unicodeScalars.contains("\r"), stdout.text.debugDescription)
        XCTAssertEqual(stdout.text.unicodeScalars.filter { $0 == "\n" }.count, 1, stdout.text.debugDescription)
        XCTAssertEqual(stdout.text.unicodeScalars.filter { $0 == "\t" }.count, 2, stdout.text.debugDescription)
        XCTAssertFalse(stderr.text.unicodeScalars.contains("\r"), stderr.text.debugDescription)
        XCTAssertEqual(stderr.text.unicodeScalars.filter { $0 == "\n" }.count, 1, stderr.text.debugDescription)
        let cleaned = ResultLine.clean("a\r\nb")
        XCTAssertFalse(cleaned.unicodeScalars.contains("\r") || cleaned.unicodeScalars.contains("\n"), cleaned.debugDescription)
    }

    func testTabInASavedPathIsReplaced() {
        reporter().report(item("http://example.com/a.jpg", DownloadResult(status: .saved, paths: ["out/a\tb.jpg"])))
        XCTAssertEqual(stdout.text, "saved\thttp://example.com/a.jpg\tout/a b.jpg\n")
    }

    func testCleanKeepsOtherText() {
        XCTAssertEqual(ResultLine.clean("café  ok"), "café  ok")
        XCTAssertEqual(ResultLine.clean("a\tb\nc\rd"), "a b c d")
    }

    func testEveryReportIsOneLine() {
        let reporter = reporter()
        reporter.report(item("http://example.com/1.jpg", DownloadResult(status: .saved, paths: ["1.jpg"])))
        reporter.report(item("http://example.com/2.jpg", .failed(DownloadError(.timeout, "timed out"), attempts: 3)))
        reporter.report(item("http://example.com/3.jpg", DownloadResult(status: .skipped, paths: ["3.jpg"])))
        XCTAssertEqual(stdout.text.split(separator: "\n", omittingEmptySubsequences: false).count, 4)
        XCTAssertEqual(stderr.text.split(separator: "\n").count, 1)
    }

    func testOnATerminalCancelledItemsAreLeftToTheSummary() {
        let model = ProgressModel(now: 0)
        let reporter = RunReporter(results: ResultOutput(format: .human(colors: false), sink: stdout, errorsOnStderr: false),
                                   display: PlainStatusDisplay(sink: stderr, model: model, interval: nil),
                                   model: model, reportFile: nil, quiet: false)
        reporter.report(item("http://example.com/a.jpg", DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled"))))
        reporter.report(item("http://example.com/b.jpg", .failed(DownloadError(.http, "HTTP 404"), attempts: 1)))
        XCTAssertEqual(stdout.text, "✗ http://example.com/b.jpg  HTTP 404\n")
        XCTAssertEqual(stderr.text, "", "the ✗ line is the failure line")
        XCTAssertEqual(reporter.finish(seconds: 1).cancelled, 1)
    }

    /// A re-run on a terminal: the items left as they were are counted, not listed; `-v` lists them;
    /// a robots.txt skip and a new file are always shown.
    func testOnATerminalItemsLeftAsTheyWereAreCountedUnlessVerbose() {
        for verbose in [false, true] {
            stdout.clear()
            stderr.clear()
            let model = ProgressModel(now: 0)
            let reporter = RunReporter(results: ResultOutput(format: .human(colors: false), sink: stdout, errorsOnStderr: false),
                                       display: PlainStatusDisplay(sink: stderr, model: model, interval: nil),
                                       model: model, reportFile: nil, quiet: false, verbose: verbose)
            var unchanged = DownloadResult(status: .skipped, paths: ["pics/a.jpg"])
            unchanged.cache = .revalidated
            var robots = DownloadResult(status: .skipped)
            robots.skipReason = "robots.txt: Disallow: /private/ (User-agent: *)"
            var earlier = DownloadResult(status: .skipped, paths: ["shards/000000.tar"])
            earlier.skipReason = "in shards/000000.tar, complete from an earlier run"
            earlier.fromEarlierRun = true
            for (name, result) in [("a", unchanged), ("b", robots), ("c", earlier), ("d", DownloadResult(status: .saved, paths: ["pics/d.jpg"]))] {
                reporter.report(item("http://example.com/\(name).jpg", result))
            }
            let lines = stdout.text.split(separator: "\n")
            XCTAssertEqual(lines.count, verbose ? 4 : 2, stdout.text)
            XCTAssertTrue(lines.contains { $0.hasPrefix("· http://example.com/b.jpg  robots.txt") }, stdout.text)
            XCTAssertTrue(lines.contains { $0.hasPrefix("✓ pics/d.jpg") }, stdout.text)
            _ = reporter.finish(seconds: 1)
            XCTAssertEqual(stderr.text.hasSuffix("(-v lists the items left as they were)\n"), !verbose, stderr.text)
        }
    }

    func testEarlierFailuresAndUploadsAreCounted() {
        var summary = RunSummary()
        var earlier = DownloadResult.failed(DownloadError(.http, "HTTP 404 (in an earlier run; --retry-failed fetches it again)"))
        earlier.fromEarlierRun = true
        summary.add(earlier)
        summary.add(.failed(DownloadError(.dns, "x")))
        summary.add(DownloadResult(status: .saved, paths: ["s3://pics/run1/a.jpg"]))
        XCTAssertEqual(summary.line, "imgfetch: 3 items: 1 saved, 0 skipped, 2 failed (1 dns, 1 http; 1 in an earlier run, "
                           + "--retry-failed fetches them again); 0 B in 0.0 s; 1 uploaded")
        // A dataset row counted when its shard was written, revised when the shard's upload failed.
        let row = DownloadResult(status: .saved, paths: ["s3://pics/ds/000000.tar"])
        summary.add(row)
        XCTAssertEqual(summary.uploaded, 2)
        summary.reclassify(row, as: .failed(DownloadError(.storage, "PUT failed")))
        XCTAssertEqual(summary.uploaded, 1)
        // A skipped file the store lacked, uploaded again.
        var skipped = DownloadResult(status: .skipped, paths: ["s3://pics/run1/a.jpg"])
        skipped.uploadedObjects = 1
        summary.add(skipped)
        XCTAssertEqual(summary.uploaded, 2)
    }

    // MARK: - Summary

    func testSummaryIsPrintedUnlessQuiet() {
        let reporter = reporter()
        reportMixedItems(to: reporter)
        stderr.clear()
        _ = reporter.finish(seconds: 3)
        XCTAssertEqual(stderr.text, "imgfetch: 4 items: 2 saved, 1 skipped, 1 failed (1 http); 2.0 KiB in 3.0 s\n")
    }

    func testQuietSuppressesTheSummary() {
        let reporter = reporter(quiet: true)
        reportMixedItems(to: reporter)
        stderr.clear()
        let summary = reporter.finish(seconds: 3)
        XCTAssertEqual(stderr.text, "")
        XCTAssertEqual(summary.items, 4)
    }

    func testQuietStillPrintsResults() {
        reporter(quiet: true).report(item("http://example.com/a.jpg", .failed(DownloadError(.http, "HTTP 500"), attempts: 1)))
        XCTAssertEqual(stdout.text, "failed\thttp://example.com/a.jpg\tHTTP 500\n")
    }

    func testJSONLinesGoToStdoutAndTheReportFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("report.jsonl").path
        let reportFile = try ReportFile(path: path)
        let reporter = reporter(jsonl: true, reportFile: reportFile)
        reportMixedItems(to: reporter)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the report appears only when complete")
        _ = reporter.finish(seconds: 1)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(written, stdout.text)
        let objects = try written.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(objects.count, 4)
        XCTAssertEqual(objects[0]["status"] as? String, "saved")
        XCTAssertEqual(objects[0]["paths"] as? [String], ["out/a.jpg"])
        XCTAssertEqual(objects[0]["bytes"] as? Int, 1024)
        XCTAssertEqual((objects[0]["line"] as? [String: Any])?["line"] as? Int, 7)
        XCTAssertEqual((objects[3]["error"] as? [String: Any])?["class"] as? String, "http")
        XCTAssertTrue(objects[0]["error"] is NSNull)
        XCTAssertEqual(objects[0]["http_version"] as? String, "2")
        XCTAssertTrue(objects[2]["http_version"] is NSNull, "no response, no protocol")
        XCTAssertEqual(objects[3]["http_version"] as? String, "1.1")
    }

    func testSummaryCountsFailuresByClassMostFrequentFirst() {
        var summary = RunSummary()
        for kind in [DownloadError.Kind.http, .dns, .dns, .timeout, .http, .dns] { summary.add(.failed(DownloadError(kind, "x"))) }
        XCTAssertEqual(summary.failedByClass, [.dns: 3, .http: 2, .timeout: 1])
        XCTAssertTrue(summary.line.hasPrefix("imgfetch: 6 items: 0 saved, 0 skipped, 6 failed (3 dns, 2 http, 1 timeout); "), summary.line)
    }

    func testSummaryLineSingularAndBytes() {
        XCTAssertEqual(RunSummary(saved: 1, bytes: 10, seconds: 0.25).line, "imgfetch: 1 item: 1 saved, 0 skipped, 0 failed; 10 B in 0.2 s")
        XCTAssertEqual(RunSummary().line, "imgfetch: 0 items: 0 saved, 0 skipped, 0 failed; 0 B in 0.0 s")
        XCTAssertEqual(ByteCount.format(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB")
        XCTAssertEqual(ByteCount.format(1023), "1023 B")
    }

    // MARK: - RunSummary.exitCode

    func testExitCodeIsZeroWhenEverythingWasSavedOrSkipped() {
        XCTAssertEqual(RunSummary().exitCode, 0)
        XCTAssertEqual(RunSummary(saved: 3, skipped: 2).exitCode, 0)
    }

    func testExitCodeIsOneWhenAnyItemFailed() {
        XCTAssertEqual(RunSummary(saved: 10, failed: 1).exitCode, 1)
        XCTAssertEqual(RunSummary(failed: 1).exitCode, 1)
    }

    func testAddCountsOutcomes() {
        var summary = RunSummary()
        var saved = DownloadResult(status: .saved, paths: ["a.jpg"])
        saved.bytes = 100
        summary.add(saved)
        summary.add(DownloadResult(status: .skipped, paths: ["b.jpg"]))
        summary.add(.failed(DownloadError(.http, "HTTP 404")))
        summary.add(DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled")))
        XCTAssertEqual(summary.saved, 1)
        XCTAssertEqual(summary.skipped, 1)
        XCTAssertEqual(summary.failed, 1)
        XCTAssertEqual(summary.cancelled, 1)
        XCTAssertEqual(summary.items, 4)
        XCTAssertEqual(summary.bytes, 100)
        XCTAssertEqual(summary.exitCode, 1)
    }

    // MARK: - Helpers

    private func reporter(quiet: Bool = false, jsonl: Bool = false, reportFile: ReportFile? = nil) -> RunReporter {
        let model = ProgressModel(now: 0)
        return RunReporter(results: ResultOutput(format: jsonl ? .jsonl : .tabSeparated, sink: stdout),
                           display: PlainStatusDisplay(sink: stderr, model: model, interval: nil),
                           model: model, reportFile: reportFile, quiet: quiet)
    }

    private func item(_ url: String, _ result: DownloadResult) -> ItemReport {
        ItemReport(position: position, displayURL: url, result: result)
    }

    /// Two saved (1 KiB each), one skipped, one failed.
    private func reportMixedItems(to reporter: RunReporter) {
        var saved = DownloadResult(status: .saved, paths: ["out/a.jpg"])
        saved.bytes = 1024
        saved.httpVersion = .http2
        reporter.report(item("http://example.com/a.jpg", saved))
        saved.paths = ["out/b.jpg"]
        reporter.report(item("http://example.com/b.jpg", saved))
        reporter.report(item("http://example.com/c.jpg", DownloadResult(status: .skipped, paths: ["out/c.jpg"])))
        reporter.report(item("http://example.com/d.jpg", .failed(DownloadError(.http, "HTTP 404"), attempts: 1, httpStatus: 404,
                                                                 httpVersion: .http1_1)))
    }
}
