import Foundation
import XCTest

/// One run per output at a time (`RunLock`): a cron job that fires while the last run still works
/// waits for it and then finds its work done, so no URL is fetched twice; `--if-running skip`
/// exits 75 at once; a killed run's lock is taken over at once; a waiting run can be interrupted.
final class RunLockTests: EndToEndTestCase {
    /// A list of `count` URLs that take `seconds` each (the test server's /delay route), and their paths.
    private func slowList(_ count: Int, seconds: Double, name: String = "urls.txt") throws -> String {
        _ = try addJPEG("a.jpg")
        let lines = (1...count).map { server.url("/delay/\(seconds)/files/a.jpg?n=\($0)") + " out=a-\($0).jpg" }
        return try scratch.write(name, lines.joined(separator: "\n") + "\n")
    }

    private func start(_ arguments: [String]) throws -> RunningImgFetch {
        try RunningImgFetch(arguments)
    }

    /// Waits until the first run holds the output's lock (it has asked for its first image).
    private func waitUntilFetching() throws {
        XCTAssertTrue(try eventually(timeout: 20) { try !server.requests().isEmpty }, "the first run never started fetching")
    }

    func testASecondRunWaitsForTheFirstAndFetchesNothingAgain() throws {
        let list = try slowList(12, seconds: 0.5)
        let first = try start([list, "-o", outputDirectory, "-j", "4", "-q"])
        try waitUntilFetching()
        let second = try start([list, "-o", outputDirectory, "-j", "4", "--jsonl"])
        let firstRun = try first.wait(timeout: 60)
        let secondRun = try second.wait(timeout: 60)
        XCTAssertEqual(firstRun.exitCode, 0, firstRun.stderr)
        XCTAssertEqual(secondRun.exitCode, 0, secondRun.stderr)
        XCTAssertTrue(secondRun.stderr.contains("imgfetch: another imgfetch run (pid \(first.process.processIdentifier), for ")
                      && secondRun.stderr.contains("is writing \(outputDirectory); waiting for it to end (--if-running skip exits instead)"),
                      secondRun.stderr)
        // Each URL was asked for once, by the first run; the second found every file done.
        let requests = try server.requests().map(\.path)
        XCTAssertEqual(requests.count, 12, "\(requests)")
        XCTAssertEqual(Set(requests).count, 12)
        let statuses = secondRun.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["status"] as? String
        }
        XCTAssertEqual(statuses, Array(repeating: "skipped", count: 12))
    }

    func testIfRunningSkipExits75AtOnceWithoutARequest() throws {
        let list = try slowList(8, seconds: 1)
        let first = try start([list, "-o", outputDirectory, "-j", "2", "-q"])
        try waitUntilFetching()
        let before = try server.requests().count
        let started = Date()
        let skipped = try ImgFetchRunner.run([list, "-o", outputDirectory, "--if-running", "skip"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertEqual(skipped.exitCode, 75)
        XCTAssertEqual(skipped.stdout, "")
        XCTAssertTrue(skipped.stderr.hasPrefix("imgfetch: another imgfetch run (pid \(first.process.processIdentifier), for "), skipped.stderr)
        XCTAssertTrue(skipped.stderr.hasSuffix(" is writing \(outputDirectory): skipped (--if-running skip)\n"), skipped.stderr)
        XCTAssertEqual(skipped.stderr.split(separator: "\n").count, 1)
        XCTAssertLessThanOrEqual(try server.requests().count, before + 2, "only the first run's requests")
        first.signal(SIGKILL)
        _ = try? first.wait()
    }

    func testAKilledRunsLockIsTakenOverAtOnce() throws {
        let list = try slowList(6, seconds: 2)
        let first = try start([list, "-o", outputDirectory, "-j", "2", "-q"])
        try waitUntilFetching()
        first.signal(SIGKILL)
        _ = try first.wait()
        let started = Date()
        let next = try ImgFetchRunner.run([list, "-o", outputDirectory, "-j", "6", "--if-running", "skip"])
        XCTAssertEqual(next.exitCode, 0, next.stderr)
        XCTAssertFalse(next.stderr.contains("another imgfetch run"), next.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(try outputFiles().filter { $0.hasSuffix(".jpg") }.count, 6)
    }

    func testAWaitingRunIsInterruptedByCtrlC() throws {
        let list = try slowList(8, seconds: 2)
        let first = try start([list, "-o", outputDirectory, "-j", "1", "-q"])
        try waitUntilFetching()
        let waiting = try start([list, "-o", outputDirectory])
        let stderrPath = URL(fileURLWithPath: waiting.stdoutPath).deletingLastPathComponent().appendingPathComponent("stderr").path
        XCTAssertTrue(eventually(timeout: 10) {
            ((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "").contains("waiting for it to end")
        })
        let interrupted = Date()
        waiting.signal(SIGINT)
        _ = try waiting.wait(timeout: 5)
        XCTAssertLessThan(Date().timeIntervalSince(interrupted), 2)
        XCTAssertEqual(waiting.process.terminationReason, .uncaughtSignal)
        XCTAssertEqual(waiting.process.terminationStatus, SIGINT)
        first.signal(SIGKILL)
        _ = try? first.wait()
    }

    func testRunsOnOneOutputWithTheirOwnWorkDirectoriesStillTakeTurns() throws {
        let list = try slowList(4, seconds: 1)
        let first = try start([list, "-o", outputDirectory, "--work-dir", scratch.file("work-1").path, "-q"])
        try waitUntilFetching()
        let second = try ImgFetchRunner.run([list, "-o", outputDirectory, "--work-dir", scratch.file("work-2").path,
                                             "--if-running", "skip"])
        XCTAssertEqual(second.exitCode, 75, second.stderr)
        XCTAssertTrue(second.stderr.contains("is writing \(outputDirectory): skipped"), second.stderr)
        XCTAssertEqual(try first.wait(timeout: 60).exitCode, 0)
    }
}
