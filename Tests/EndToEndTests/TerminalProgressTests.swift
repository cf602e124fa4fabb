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
        if let session { _ = try? tmux(["kill-session", "-t", session]) }
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

        var finalScreen = ""
        XCTAssertTrue(try eventually(timeout: 30) {
            finalScreen = try screen()
            return finalScreen.contains("EXIT=")
        }, "imgfetch did not finish:\n\(finalScreen)")
        XCTAssertTrue(finalScreen.contains("EXIT=1"), finalScreen)
        XCTAssertTrue(finalScreen.contains("7 items: 6 saved, 0 skipped, 1 failed"), finalScreen)
        XCTAssertTrue(finalScreen.contains("failed \(server.url("/status/404")): HTTP 404"), finalScreen)
        // The live area is erased: no row of an active transfer remains.
        XCTAssertFalse(finalScreen.contains("slow-"), finalScreen)
        XCTAssertEqual(try outputFiles().count, 6)
    }

    func testTypedURLsAreReadAfterAHint() throws {
        _ = try addJPEG("typed.jpg")
        try startSession("'\(ImgFetchRunner.binary.path)' -o '\(outputDirectory)'; echo \"EXIT=$?\"; sleep 60")
        var waiting = ""
        XCTAssertTrue(try eventually(timeout: 10) {
            waiting = try screen()
            return waiting.contains("reading URLs from the terminal; end with Ctrl-D")
        }, "no hint:\n\(waiting)")
        _ = try tmux(["send-keys", "-t", session, server.url("/files/typed.jpg"), "Enter"])
        _ = try tmux(["send-keys", "-t", session, "C-d"])
        var finalScreen = ""
        XCTAssertTrue(try eventually(timeout: 20) {
            finalScreen = try screen()
            return finalScreen.contains("EXIT=")
        }, "imgfetch did not finish:\n\(finalScreen)")
        XCTAssertTrue(finalScreen.contains("EXIT=0"), finalScreen)
        XCTAssertEqual(try outputFiles(), ["typed.jpg"])
    }

    private func screen() throws -> String {
        try tmux(["capture-pane", "-p", "-t", session])
    }

    /// Starts the detached session with posix_spawn, not Foundation's Process: the tmux server that
    /// the client forks would inherit Process's bookkeeping descriptor and make waitUntilExit hang.
    private func startSession(_ command: String) throws {
        let arguments = ["tmux", "new-session", "-d", "-s", session!, "-x", "100", "-y", "30", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, "tmux", nil, nil, &argv, environ) == 0 else {
            throw XCTSkip("cannot start tmux")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
