import Foundation
import XCTest

/// The progress bar in a real terminal: tmux runs imgfetch, capture-pane reads the screen.
final class TerminalProgressTests: EndToEndTestCase {
    private var session: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (Scripts/install-deps installs it)")
        }
        session = "imgfetch-test-\(UUID().uuidString.prefix(8))"
    }

    override func tearDown() {
        if let session { TmuxSession.kill(session) }
        super.tearDown()
    }

    func testLiveAreaWhileFetchingThenOnlyTheSummary() throws {
        _ = try addJPEG("a.jpg")
        // Each body drips for about two seconds, so the live area is on screen for a while.
        let urls = (1...6).map { server.url("/drip/3000/files/a.jpg") + " out=slow-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n" + server.url("/status/404") + "\n")
        let command = "'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 3 > /dev/null; echo \"EXIT=$?\"; sleep 60"
        try startSession(command)

        var liveScreen = ""
        XCTAssertTrue(try eventually(timeout: 20) {
            liveScreen = try screen()
            return liveScreen.contains("slow-") && liveScreen.contains("/7")
        }, "no live area seen:\n\(liveScreen)")
        let liveLines = liveScreen.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertTrue(liveLines.contains { $0.hasPrefix("[") && $0.contains("/7") && $0.contains("saved") }, liveScreen)
        XCTAssertTrue(liveLines.contains { $0.contains("slow-") && $0.contains("%") }, liveScreen)
        XCTAssertTrue(liveLines.allSatisfy { $0.count < 100 }, "a line wrapped:\n\(liveScreen)")

        let finalScreen = try waitForExit(timeout: 30)
        XCTAssertTrue(finalScreen.contains("EXIT=1"), finalScreen)
        XCTAssertTrue(finalScreen.contains("7 items: 6 saved, 0 skipped, 1 failed"), finalScreen)
        XCTAssertTrue(finalScreen.contains("failed \(server.url("/status/404")): HTTP 404"), finalScreen)
        // The live area is erased: no row of an active transfer remains.
        XCTAssertFalse(finalScreen.contains("slow-"), finalScreen)
        XCTAssertEqual(try outputFiles().count, 6)
    }

    /// The issue's `hang.txt`: two good URLs and two whose server sends no response. The live area
    /// shows the two as waiting, with their age, and the ETA as unknown, until they time out.
    func testTransfersThatWaitAreShownWithTheirAge() throws {
        _ = try addJPEG("a.jpg")
        let urls = [server.url("/files/a.jpg") + " out=good-1.jpg", server.url("/files/a.jpg") + "?2 out=good-2.jpg",
                    server.url("/delay/30/files/a.jpg") + "?1 out=hang-1.jpg", server.url("/delay/30/files/a.jpg") + "?2 out=hang-2.jpg"]
        let list = try scratch.write("hang.txt", urls.joined(separator: "\n") + "\n")
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -t 5 --retries 0 > /dev/null; "
                         + "echo \"EXIT=$?\"; sleep 60")
        var waiting = ""
        XCTAssertTrue(try eventually(timeout: 10) {
            waiting = try screen()
            return waiting.contains("hang-1.jpg") && waiting.contains("waiting 3s")
        }, "no waiting transfer shown:\n\(waiting)")
        let lines = waiting.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("hang-") && $0.contains("waiting ") }.count, 2, waiting)
        XCTAssertTrue(lines.contains { $0.contains("2/4") && $0.contains("ETA --") }, waiting)
        let finalScreen = try waitForExit(timeout: 30)
        XCTAssertTrue(finalScreen.contains("EXIT=1"), finalScreen)
        XCTAssertTrue(finalScreen.contains("2 saved, 0 skipped, 2 failed (2 timeout)"), finalScreen)
        XCTAssertFalse(finalScreen.contains("waiting"), finalScreen)
    }

    /// A re-run on a terminal lists nothing for the files left as they were; the summary counts
    /// them and says that -v lists them.
    func testAReRunCountsTheUnchangedItemsInsteadOfListingThem() throws {
        let names = try server.addSamples(count: 3)
        let list = try scratch.write("urls.txt", names.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        XCTAssertEqual(try fetch(names.map { server.url("/files/" + $0) }).exitCode, 0)
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)'; echo \"EXIT=$?\"; sleep 60")
        let finalScreen = try waitForExit(timeout: 20)
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
        XCTAssertFalse(finalScreen.contains("·"), "no line per unchanged item:\n\(finalScreen)")
        XCTAssertTrue(finalScreen.contains("\(names.count) items: 0 saved, \(names.count) skipped"), finalScreen)
        XCTAssertTrue(finalScreen.contains("(-v lists the items left as they were)"), finalScreen)
    }

    /// Ctrl-C mid-run: the terminal's `^C` echo is cleared with the live area.
    func testCtrlCLeavesNoCaretC() throws {
        _ = try addJPEG("a.jpg")
        let urls = (1...4).map { server.url("/drip/1000/files/a.jpg") + "?\($0) out=slow-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 2 > /dev/null; echo \"EXIT=$?\"; sleep 60")
        XCTAssertTrue(try eventually(timeout: 10) { try screen().contains("slow-1") })
        try TmuxSession.keys(session, "C-c")
        let finalScreen = try waitForExit(timeout: 20)
        XCTAssertTrue(finalScreen.contains("EXIT=130"), finalScreen)
        XCTAssertTrue(finalScreen.contains("cancelled"), finalScreen)
        XCTAssertFalse(finalScreen.contains("^C"), finalScreen)
    }

    /// URLs typed at the terminal: no live area is drawn over the line being typed until the list
    /// ends with Ctrl-D; then the area shows the transfers still running.
    func testTheLiveAreaWaitsForTheTypedListToEnd() throws {
        _ = try addJPEG("a.jpg")
        try startSession("'\(ImgFetchRunner.binary.path)' -o '\(outputDirectory)' > /dev/null; echo \"EXIT=$?\"; sleep 60")
        XCTAssertTrue(try eventually(timeout: 10) { try screen().contains("end with Ctrl-D") })
        try TmuxSession.keys(session, server.url("/drip/1500/files/a.jpg") + " out=typed-1.jpg", "Enter")
        try TmuxSession.keys(session, "http://half-typed")
        usleep(1_500_000)
        let typing = try screen()
        XCTAssertTrue(typing.split(separator: "\n").contains { $0.hasPrefix("http://half-typed") }, typing)
        XCTAssertFalse(typing.contains("0/1"), "a frame was drawn over the typing:\n\(typing)")
        try TmuxSession.keys(session, "C-u")
        try TmuxSession.keys(session, "C-d")
        let finalScreen = try waitForExit(timeout: 20)
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
        XCTAssertEqual(try outputFiles(), ["typed-1.jpg"])
    }

    func testTypedURLsAreReadAfterAHint() throws {
        _ = try addJPEG("typed.jpg")
        try startSession("'\(ImgFetchRunner.binary.path)' -o '\(outputDirectory)'; echo \"EXIT=$?\"; sleep 60")
        var waiting = ""
        XCTAssertTrue(try eventually(timeout: 10) {
            waiting = try screen()
            return waiting.contains("reading URLs from the terminal; end with Ctrl-D")
        }, "no hint:\n\(waiting)")
        try TmuxSession.keys(session, server.url("/files/typed.jpg"), "Enter")
        try TmuxSession.keys(session, "C-d")
        let finalScreen = try waitForExit(timeout: 20)
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
        XCTAssertEqual(try outputFiles(), ["typed.jpg"])
    }

    // MARK: - stdout and stderr on one terminal

    func testResultLinesPrintAboveThePinnedAreaAndNothingStaleRemains() throws {
        _ = try addJPEG("a.jpg")
        let fast = (1...150).map { server.url("/files/a.jpg") + "?n=\($0) out=fast-\($0).jpg" }
        let slow = (1...6).map { server.url("/drip/1500/files/a.jpg") + "?n=\($0) out=slow-\($0).jpg" }
        // The slow ones first, so the fast ones finish while the live area shows them.
        let list = try scratch.write("urls.txt", (slow + fast + [server.url("/status/404")]).joined(separator: "\n") + "\n")
        let report = scratch.file("r.jsonl").path
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 8 --report '\(report)'; "
                         + "echo \"EXIT=$?\"; sleep 60")

        var captures: [String] = []
        var finalScreen = ""
        XCTAssertTrue(try eventually(timeout: 40) {
            let capture = try screen()
            if capture.contains("EXIT=") {
                finalScreen = capture
                return true
            }
            if capture.contains("/157") { captures.append(capture) }
            return false
        }, "imgfetch did not finish:\n\(captures.last ?? "")")
        XCTAssertGreaterThan(captures.count, 5)
        for capture in captures where !capture.contains("items:") {
            let lines = capture.split(separator: "\n")
            // The live area is the last thing on screen in every capture, results above it.
            let barIndex = try XCTUnwrap(lines.lastIndex { $0.hasPrefix("[") && $0.contains("/157") }, "no bar:\n\(capture)")
            XCTAssertEqual(lines.filter { $0.hasPrefix("[") && $0.contains("/157") }.count, 1, "stale bar frames:\n\(capture)")
            XCTAssertFalse(lines[barIndex...].contains { $0.hasPrefix("✓") || $0.hasPrefix("✗") }, "a result under the area:\n\(capture)")
        }

        let all = try screenAndScrollback()
        let lines = all.split(separator: "\n").map(String.init)
        let summary = try XCTUnwrap(lines.firstIndex { $0.contains("157 items: 156 saved, 0 skipped, 1 failed") }, all)
        let results = lines[..<summary].filter { $0.hasPrefix("✓ ") || $0.hasPrefix("✗ ") }
        XCTAssertEqual(results.count, 157, all)
        let names = results.compactMap { $0.split(separator: " ").dropFirst().first.map { String($0.split(separator: "/").last!) } }
        XCTAssertEqual(Set(names).count, 157)
        for number in 1...6 { XCTAssertTrue(names.contains("slow-\(number).jpg"), "slow-\(number).jpg") }
        XCTAssertTrue(results.contains { $0.hasPrefix("✗ \(server.url("/status/404"))  HTTP 404") }, all)
        XCTAssertTrue(results.first { $0.contains("fast-1.jpg") }?.contains("KiB") == true, "size shown")
        // In the order the report records them: both are written as each item finishes.
        let reported = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map { line in
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let path = (object["paths"] as? [String])?.first
            return path.map { String($0.split(separator: "/").last!) } ?? object["url"] as! String
        }
        let shown = results.map { line in
            let field = String(line.split(separator: " ")[1])
            return field.hasPrefix("http") ? field : String(field.split(separator: "/").last!)
        }
        XCTAssertEqual(shown, reported)
        // No bar frame, no transfer row and no failure line on stderr were left behind.
        XCTAssertFalse(lines.contains { $0.hasPrefix("[") && $0.contains("/157") }, all)
        XCTAssertFalse(lines.contains { $0.hasPrefix("  slow-") }, all)
        XCTAssertFalse(lines.contains { $0.hasPrefix("failed ") }, "the ✗ line is the failure line:\n\(all)")
        XCTAssertTrue(finalScreen.contains("EXIT=1"), finalScreen)
    }

    func testAPausedHostIsShownUntilItsPauseEnds() throws {
        _ = try addJPEG("a.jpg")
        // The first request gets 503 with Retry-After: 4; the host's other items wait for the pause.
        let urls = [server.url("/retry-after/1/4/pause-shown/files/a.jpg") + " out=first.jpg"]
            + (1...3).map { server.url("/files/a.jpg") + "?n=\($0) out=later-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' --per-host 1 > /dev/null; "
                         + "echo \"EXIT=$?\"; sleep 60")
        var paused = ""
        XCTAssertTrue(try eventually(timeout: 10) {
            paused = try screen()
            return paused.contains("paused (429/503): \(server.base)")
        }, "no paused host shown:\n\(paused)")
        XCTAssertTrue(paused.split(separator: "\n").contains { $0.contains("paused (429/503)") && $0.hasSuffix(" s") }, paused)
        let finalScreen = try waitForExit(timeout: 30)
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
        XCTAssertFalse(finalScreen.contains("paused (429/503)"), finalScreen)
        XCTAssertEqual(try outputFiles().count, 4)
    }

    func testNarrowTerminalShowsOnlyTheOverallLineAndWholeNames() throws {
        _ = try addJPEG("a.jpg")
        let urls = (1...6).map { server.url("/drip/1500/files/a.jpg") + "?n=\($0) out=average-photo-of-summer-\(1200 + $0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 3; echo \"EXIT=$?\"; sleep 60",
                         columns: 40)
        var live = ""
        XCTAssertTrue(try eventually(timeout: 20) {
            live = try screen()
            return live.contains("/6")
        }, live)
        let liveLines = live.split(separator: "\n")
        XCTAssertEqual(liveLines.filter { $0.contains("/6") }.count, 1, live)
        XCTAssertFalse(liveLines.contains { $0.hasPrefix("  ") }, "no transfer rows below 60 columns:\n\(live)")
        XCTAssertTrue(liveLines.allSatisfy { $0.count < 40 }, live)

        let finalScreen = try waitForExit(timeout: 30, scrollback: true)
        // Result lines wrap rather than lose the part of the name that tells them apart.
        let joined = finalScreen.replacingOccurrences(of: "\n", with: "")
        for number in 1201...1206 {
            XCTAssertTrue(joined.contains("average-photo-of-summer-\(number).jpg"), finalScreen)
        }
        XCTAssertFalse(finalScreen.split(separator: "\n").contains { $0.hasPrefix("[") && $0.contains("/6") }, finalScreen)
    }

    func testResizingMidRunLeavesNoJunk() throws {
        _ = try addJPEG("a.jpg")
        let urls = (1...6).map { server.url("/drip/800/files/a.jpg") + "?n=\($0) out=resized-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 6; echo \"EXIT=$?\"; sleep 60")
        var live = ""
        XCTAssertTrue(try eventually(timeout: 20) {
            live = try screen()
            return live.contains("resized-6")
        }, live)
        // The issue's 60 → 40 → 100 among them: no fragment of a row drawn at another width stays.
        for columns in [70, 60, 40, 100, 45, 61] {
            try TmuxSession.resize(session, columns: columns, rows: 30)
            usleep(300_000)
            let lines = try screen().split(separator: "\n")
            let shown = "at \(columns):\n\(lines.joined(separator: "\n"))"
            XCTAssertEqual(lines.filter { $0.contains("/6") && $0.contains("]") }.count, 1, shown)
            for line in lines where line.contains("resized-") && !line.hasPrefix("✓ ") {
                XCTAssertTrue(columns >= 60 && line.hasPrefix("  resized-") && line.contains("%"), "a fragment \(shown)")
            }
        }
        // The screen, not the scrollback: when a terminal narrows, tmux rewraps the frame on screen
        // and may push its top rows into the scrollback before imgfetch can redraw.
        let finalScreen = try waitForExit(timeout: 30)
        let lines = finalScreen.split(separator: "\n")
        XCTAssertFalse(lines.contains { $0.contains("/6") && $0.contains("]") }, "a bar frame was left:\n\(finalScreen)")
        XCTAssertFalse(lines.contains { $0.hasPrefix("  resized-") }, finalScreen)
        XCTAssertEqual(lines.filter { $0.hasPrefix("✓ ") }.count, 6, finalScreen)
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
    }

    // MARK: - stdout piped into a program on the same terminal

    func testAReaderPrintingToTheTerminalGetsTheScreen() throws {
        _ = try addJPEG("a.jpg")
        let urls = (1...6).map { server.url("/drip/1500/files/a.jpg") + "?n=\($0) out=piped-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        // Two stages, as `| jq | head` would be: the last one prints on the terminal.
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 6 --jsonl | cat | cut -c1-24; "
                         + "echo \"EXIT=$?\"; sleep 60")
        var finalScreen = ""
        XCTAssertTrue(try eventually(timeout: 30) {
            finalScreen = try screenAndScrollback()
            XCTAssertFalse(finalScreen.contains("/6"), "a live area under the reader's lines:\n\(finalScreen)")
            return finalScreen.contains("EXIT=")
        }, finalScreen)
        let lines = finalScreen.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0 == "{\"url\":\"\(server.url("/drip/1500/files/a.jpg").prefix(16))" }.count, 6, finalScreen)
        XCTAssertTrue(finalScreen.contains("6 items: 6 saved"), finalScreen)
    }

    func testAReaderWritingElsewhereKeepsTheLiveArea() throws {
        _ = try addJPEG("a.jpg")
        let urls = (1...6).map { server.url("/drip/1500/files/a.jpg") + "?n=\($0) out=kept-\($0).jpg" }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        let copy = scratch.file("copy.jsonl").path
        try startSession("'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 6 --jsonl | cat > '\(copy)'; "
                         + "echo \"EXIT=$?\"; sleep 60")
        var live = ""
        XCTAssertTrue(try eventually(timeout: 20) {
            live = try screen()
            return live.contains("kept-") && live.contains("/6")
        }, "no live area:\n\(live)")
        XCTAssertTrue(try eventually(timeout: 30) { try screen().contains("EXIT=0") })
        XCTAssertEqual(try String(contentsOfFile: copy, encoding: .utf8).split(separator: "\n").count, 6)
    }

    /// Waits for the command's `EXIT=` line and returns the screen (and the scrollback) then.
    private func waitForExit(timeout: Double, scrollback: Bool = false) throws -> String {
        var capture = ""
        XCTAssertTrue(try eventually(timeout: timeout) {
            capture = try scrollback ? screenAndScrollback() : screen()
            return capture.contains("EXIT=")
        }, "imgfetch did not finish:\n\(capture)")
        return capture
    }

    private func screen() throws -> String {
        try TmuxSession.screen(session)
    }

    private func screenAndScrollback() throws -> String {
        try TmuxSession.screenAndScrollback(session)
    }

    private func startSession(_ command: String, columns: Int = 100) throws {
        try TmuxSession.start(session, command, columns: columns, rows: 30)
    }
}
