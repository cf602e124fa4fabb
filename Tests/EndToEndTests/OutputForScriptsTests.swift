import Foundation
import XCTest

/// stdout and stderr as scripts and cron see them: JSONL, the report file, quiet logs, signals, pipes.
final class OutputForScriptsTests: EndToEndTestCase {
    func testJSONLHasOneParsableObjectPerItem() throws {
        let data = try addJPEG("a.jpg")
        let ok = server.url("/files/a.jpg")
        let missing = server.url("/status/404")
        let result = try fetch(["# comment", ok, missing, "ftp://x/y", ok + " out=b.jpg"], ["--jsonl"])
        XCTAssertEqual(result.exitCode, 1)
        let objects = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
        XCTAssertEqual(objects.count, 4)
        let byLine = Dictionary(uniqueKeysWithValues: objects.map { (($0["line"] as! [String: Any])["line"] as! Int, $0) })
        XCTAssertEqual(byLine[2]?["status"] as? String, "saved")
        XCTAssertEqual(byLine[2]?["paths"] as? [String], [outputDirectory + "/a.jpg"])
        XCTAssertEqual(byLine[2]?["bytes"] as? Int, data.count)
        XCTAssertEqual(byLine[2]?["format"] as? String, "jpeg")
        XCTAssertEqual(byLine[2]?["http_status"] as? Int, 200)
        XCTAssertEqual(byLine[3]?["status"] as? String, "failed")
        XCTAssertEqual(byLine[3]?["http_status"] as? Int, 404)
        XCTAssertEqual((byLine[3]?["error"] as? [String: Any])?["class"] as? String, "http")
        XCTAssertEqual((byLine[4]?["error"] as? [String: Any])?["class"] as? String, "invalid-input")
        XCTAssertEqual(byLine[5]?["coalesced"] as? Bool, true)
        XCTAssertEqual(byLine[5]?["paths"] as? [String], [outputDirectory + "/b.jpg"])
        for object in objects {
            for key in ["url", "status", "paths", "http_status", "bytes", "format", "width", "height", "verified",
                        "attempts", "duration_ms", "coalesced", "error", "line"] {
                XCTAssertNotNil(object[key], "missing \(key)")
            }
        }
    }

    func testReportFileHoldsTheSameLines() throws {
        _ = try addJPEG("a.jpg")
        let report = scratch.file("report.jsonl").path
        let result = try fetch([server.url("/files/a.jpg"), server.url("/status/500")], ["--report", report, "--retries", "0"])
        XCTAssertEqual(result.exitCode, 1)
        let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        for line in lines { XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(line.utf8))) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: report + ".part"))
        XCTAssertTrue(result.stdout.hasPrefix("saved\t") || result.stdout.hasPrefix("failed\t"), "stdout stays tab-separated")
    }

    func testSecretsAppearNowhere() throws {
        _ = try addJPEG("a.jpg")
        let report = scratch.file("report.jsonl").path
        let url = "http://bob:hunter2@127.0.0.1:\(server.port)/status/404"
        let result = try fetch([url], ["--jsonl", "--report", report, "-u", "alice:s3cret", "-H", "X-Api-Key: k-987"])
        XCTAssertEqual(result.exitCode, 1)
        let everything = result.stdout + result.stderr + (try String(contentsOfFile: report, encoding: .utf8))
        for secret in ["hunter2", "s3cret", "k-987"] {
            XCTAssertFalse(everything.contains(secret), "\(secret) leaked: \(everything)")
        }
    }

    func testStderrOffATerminalHasNoControlSequences() throws {
        _ = try addJPEG("a.jpg")
        for progress in ["auto", "bar", "plain"] where progress != "bar" {
            let result = try fetch([server.url("/files/a.jpg"), server.url("/status/404")], ["--progress", progress, "--cache-policy", "reload"])
            XCTAssertFalse(result.stderr.contains("\r"), progress)
            XCTAssertFalse(result.stderr.contains("\u{1B}"), progress)
            XCTAssertTrue(result.stderr.contains("failed \(server.url("/status/404")): HTTP 404"), result.stderr)
            XCTAssertTrue(result.stderr.contains("2 items: 1 saved"), result.stderr)
        }
    }

    func testPlainProgressPrintsStatusLines() throws {
        _ = try addJPEG("a.jpg")
        let result = try fetch([server.url("/delay/1.2/files/a.jpg")], ["--progress", "plain", "--progress-interval", "0.3",
                                                                      "-u", "bob:s3cret"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let lines = result.stderr.split(separator: "\n")
        // A start line with the time, the version, the arguments (the password hidden), the lists and the output.
        let stamp = #"imgfetch: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "#
        XCTAssertNotNil(lines.first?.range(of: stamp + "start: imgfetch \\S+, pid \\d+, in /", options: .regularExpression), result.stderr)
        XCTAssertTrue(lines.first?.hasSuffix("--progress plain --progress-interval 0.3 -u 'bob:***'; lists: \(scratch.file("urls.txt").path); "
                                             + "output: \(outputDirectory)") == true, result.stderr)
        XCTAssertFalse(result.stderr.contains("s3cret"))
        // Status lines with the time and an ETA.
        let statusLines = lines.filter { $0.range(of: stamp + "0/1 items: .*, ETA ", options: .regularExpression) != nil }
        XCTAssertGreaterThanOrEqual(statusLines.count, 2, result.stderr)
        XCTAssertFalse(result.stderr.contains("\r"))
    }

    /// `-q | awk '$1 == "failed"'` shows each failure once: its result line, not also a stderr line.
    func testQuietLeavesFailuresToTheirResultLines() throws {
        _ = try addJPEG("a.jpg")
        let missing = server.url("/status/404")
        let result = try fetch([server.url("/files/a.jpg"), missing], ["-q"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(result.results.count, 2)
        XCTAssertEqual(result.result(for: missing), ["failed", missing, "HTTP 404"])
        // What stops the run is still said.
        let unreadable = try ImgFetchRunner.run(["-q", scratch.file("missing.txt").path])
        XCTAssertEqual(unreadable.exitCode, 2)
        XCTAssertTrue(unreadable.stderr.hasPrefix("imgfetch: cannot read list"), unreadable.stderr)
    }

    /// A cron log (`>> fetch.log 2>&1`) holds each failure once, with the summary.
    func testALogOfBothStreamsHoldsEachFailureOnce() throws {
        _ = try addJPEG("a.jpg")
        let missing = server.url("/status/404")
        let list = try scratch.write("urls.txt", [server.url("/files/a.jpg"), missing].joined(separator: "\n") + "\n")
        let log = scratch.file("fetch.log").path
        let run = try ImgFetchRunner.runShell("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' --progress plain >> '\(log)' 2>&1")
        XCTAssertEqual(run.exitCode, 1)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertEqual(text.components(separatedBy: "HTTP 404").count - 1, 1, text)
        XCTAssertTrue(text.contains("failed\t\(missing)\tHTTP 404\n"), text)
        XCTAssertTrue(text.contains("1 saved, 0 skipped, 1 failed (1 http)"), text)
    }

    func testSIGINTCancelsCleansUpAndExits130() throws {
        try assertInterrupted(by: SIGINT, exitCode: 130)
    }

    func testSIGTERMCancelsCleansUpAndExits143() throws {
        try assertInterrupted(by: SIGTERM, exitCode: 143)
    }

    private func assertInterrupted(by signal: Int32, exitCode: Int32) throws {
        _ = try addJPEG("a.jpg")
        // Slow bodies: each drips 200 bytes a second, so nothing finishes before the signal.
        let urls = (1...6).map { server.url("/drip/200/files/a.jpg") + " out=slow-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        let running = try RunningImgFetch([list, "-o", outputDirectory, "-j", "6"])
        XCTAssertTrue(try eventually { try server.requests(to: "/drip/").count >= 1 })
        usleep(300_000)
        running.signal(signal)
        let result = try running.wait()

        XCTAssertEqual(result.exitCode, exitCode, result.stderr)
        XCTAssertEqual(try outputFiles(), [], "no file and no temp file may remain")
        XCTAssertEqual(result.results.count, 6, "every item appears once: \(result.stdout)")
        XCTAssertTrue(result.results.allSatisfy { $0[0] == "cancelled" }, result.stdout)
        XCTAssertTrue(result.stderr.contains("6 cancelled"), result.stderr)
    }

    func testClosedStdoutStopsQuietly() throws {
        let names = try server.addSamples(count: 20)
        let list = try scratch.write("urls.txt", names.map { server.url("/delay/0.2/files/\($0)") }.joined(separator: "\n") + "\n")
        let script = "'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 2 | head -n 1; echo \"status=${PIPESTATUS[0]}\" >&2"
        let result = try ImgFetchRunner.runShell(script)
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 1)
        XCTAssertTrue(result.stderr.hasSuffix("status=141\n"), result.stderr)
        XCTAssertEqual(result.stderr, "status=141\n", "no messages after the pipe closed")
        XCTAssertEqual(try outputFiles().filter { $0.hasPrefix(".") }, [], "no temp files left")
    }
}
