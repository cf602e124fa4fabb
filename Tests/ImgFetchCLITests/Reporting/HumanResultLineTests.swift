import XCTest
import ImgFetchCore
@testable import ImgFetchCLI

final class HumanResultLineTests: XCTestCase {
    private let position = ListPosition(listName: "list.txt", line: 7)

    func testSavedShowsPathDimensionsAndSize() {
        var result = DownloadResult(status: .saved, paths: ["pics/cat.jpg"])
        result.bytes = 49_357
        result.format = .jpeg
        result.image = ImageInfo(width: 640, height: 480, channels: 3, bitDepth: 8, verified: true)
        XCTAssertEqual(line(result), "✓ pics/cat.jpg  640×480  48.2 KiB\n")
        XCTAssertEqual(line(result, colors: true), "\u{1B}[32m✓\u{1B}[0m pics/cat.jpg  640×480  48.2 KiB\n")
    }

    func testConvertedOutputShowsBothSizes() {
        var result = DownloadResult(status: .saved, paths: ["pics/cat.png"])
        result.bytes = 2048
        var image = ImageInfo(width: 4000, height: 3000, channels: 3, bitDepth: 8, verified: true)
        image.outputWidth = 256
        image.outputHeight = 192
        result.image = image
        XCTAssertEqual(line(result), "✓ pics/cat.png  4000×3000 → 256×192  2.0 KiB\n")
        // The size shown is what was written; the body's goes in brackets.
        result.bytes = 507_904
        result.outputBytes = 28_774
        XCTAssertEqual(line(result), "✓ pics/cat.png  4000×3000 → 256×192  28.1 KiB (source 496.0 KiB)\n")
    }

    func testUnverifiedFormatIsNamed() {
        var result = DownloadResult(status: .saved, paths: ["pics/logo.svg"])
        result.bytes = 300
        result.format = .svg
        XCTAssertEqual(line(result), "✓ pics/logo.svg  300 B  SVG, not verified\n")
    }

    func testSkippedSaysTheFileIsAlreadyThere() {
        XCTAssertEqual(line(DownloadResult(status: .skipped, paths: ["pics/a.jpg"])), "· pics/a.jpg  already there\n")
    }

    func testFailureShowsTheURLAndTheErrorInRed() {
        let result = DownloadResult.failed(DownloadError(.http, "HTTP 404 Not Found"), attempts: 3, httpStatus: 404)
        XCTAssertEqual(line(result), "✗ http://example.com/a.jpg  HTTP 404 Not Found (after 3 attempts)\n")
        XCTAssertEqual(line(result, colors: true),
                       "\u{1B}[31m✗\u{1B}[0m http://example.com/a.jpg  \u{1B}[31mHTTP 404 Not Found (after 3 attempts)\u{1B}[0m\n")
    }

    func testBadListLineNamesTheLine() {
        let result = DownloadResult.failed(DownloadError(.invalidInput, "unknown field 'size='"))
        XCTAssertEqual(line(result), "✗ list.txt:7  unknown field 'size='\n")
    }

    func testCancelled() {
        XCTAssertEqual(line(DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled"))),
                       "✗ http://example.com/a.jpg  cancelled\n")
    }

    func testHostileTextCannotMoveTheCursorOrPaint() {
        let result = DownloadResult.failed(DownloadError(.http, "bad\u{1B}[2J\rname\u{202E}gpj"), attempts: 1)
        let text = HumanResultLine.format(ItemReport(position: position, displayURL: "http://x/\u{1B}[31m.jpg", result: result),
                                          colors: false)
        XCTAssertEqual(text, "✗ http://x/^[[31m.jpg  bad^[[2J^Mname?gpj\n")
    }

    // MARK: - Where result lines go

    private final class CountingDisplay: StatusDisplay {
        let liveArea: Bool
        init(liveArea: Bool) { self.liveArea = liveArea }
        func message(_ line: String) {}
        func finish(summary: String?) {}
        var showsProgress: Bool { liveArea }
        var drawsLiveArea: Bool { liveArea }
    }

    func testOffATerminalTheContractsAreUnchanged() {
        let off = OutputTerminals(stdoutIsTerminal: false, stderrIsTerminal: true, shared: false)
        let bar = CountingDisplay(liveArea: true)
        XCTAssertEqual(choose(jsonl: false, off, bar).format, .tabSeparated)
        XCTAssertEqual(choose(jsonl: true, off, bar).format, .jsonl)
        XCTAssertTrue(choose(jsonl: false, off, bar).sink is BufferSink, "stdout is written directly")
        XCTAssertTrue(choose(jsonl: false, off, bar).errorsOnStderr)
    }

    func testOneTerminalForBothGoesThroughTheLiveArea() {
        let shared = OutputTerminals(stdoutIsTerminal: true, stderrIsTerminal: true, shared: true)
        let output = choose(jsonl: false, shared, CountingDisplay(liveArea: true))
        XCTAssertEqual(output.format, .human(colors: true))
        XCTAssertFalse(output.sink is BufferSink, "through the display")
        XCTAssertFalse(output.errorsOnStderr, "the ✗ line already shows the error on the same screen")
        let json = choose(jsonl: true, shared, CountingDisplay(liveArea: true))
        XCTAssertEqual(json.format, .jsonl)
        XCTAssertFalse(json.sink is BufferSink)
        XCTAssertTrue(json.errorsOnStderr)
        XCTAssertTrue(choose(jsonl: false, shared, CountingDisplay(liveArea: false)).sink is BufferSink,
                      "no live area, nothing to go around")
    }

    func testTwoDifferentTerminalsAreNotInterleaved() {
        let apart = OutputTerminals(stdoutIsTerminal: true, stderrIsTerminal: false, shared: false)
        let output = choose(jsonl: false, apart, CountingDisplay(liveArea: false))
        XCTAssertEqual(output.format, .human(colors: true))
        XCTAssertTrue(output.sink is BufferSink)
        XCTAssertTrue(output.errorsOnStderr, "stderr is a log: it keeps its failure lines")
    }

    /// `-q`, and one file for both (`>> fetch.log 2>&1`): each failure is written once, as its result line.
    func testQuietAndOneFileForBothWriteEachFailureOnce() throws {
        let off = OutputTerminals(stdoutIsTerminal: false, stderrIsTerminal: true, shared: false)
        XCTAssertFalse(ResultOutput.choose(jsonl: false, quiet: true, terminals: off, colors: false, stdout: BufferSink(),
                                           display: CountingDisplay(liveArea: false)).errorsOnStderr)
        let log = OutputTerminals(stdoutIsTerminal: false, stderrIsTerminal: false, shared: false, sameFile: true)
        XCTAssertFalse(choose(jsonl: false, log, CountingDisplay(liveArea: false)).errorsOnStderr)
        XCTAssertFalse(choose(jsonl: true, log, CountingDisplay(liveArea: false)).errorsOnStderr)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-log-\(UUID().uuidString)").path
        let first = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        let second = dup(first)
        let other = open(path, O_WRONLY | O_APPEND)
        let pipeEnds = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        defer {
            [first, second, other, pipeEnds[0], pipeEnds[1]].forEach { close($0) }
            pipeEnds.deallocate()
            unlink(path)
        }
        XCTAssertEqual(pipe(pipeEnds), 0)
        XCTAssertTrue(OutputTerminals.detect(stdout: first, stderr: second).sameFile, "2>&1")
        XCTAssertTrue(OutputTerminals.detect(stdout: first, stderr: other).sameFile, "the file opened twice (>> log 2>> log)")
        XCTAssertFalse(OutputTerminals.detect(stdout: first, stderr: pipeEnds[1]).sameFile)
        XCTAssertTrue(OutputTerminals.detect(stdout: pipeEnds[1], stderr: pipeEnds[1]).sameFile, "2>&1 | cat")
    }

    func testSameDeviceComparesTheTerminalNotThePath() throws {
        // A pseudo-terminal opened twice, as a shell opens stdout and stderr; another one apart.
        func openTerminal() throws -> (controller: Int32, path: String) {
            // posix_openpt and ptsname by hand: Glibc's module exports neither them nor the ioctl
            // numbers, which are macros: TIOCSPTLCK is _IOW('T', 0x31, int), TIOCGPTN _IOR('T', 0x30, unsigned).
            let (lockRequest, numberRequest): (UInt, UInt) = (0x4004_5431, 0x8004_5430)
            let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard controller >= 0, ioctl(controller, lockRequest, &unlock) == 0,
                  ioctl(controller, numberRequest, &number) == 0 else {
                throw XCTSkip("no pseudo-terminals here")
            }
            return (controller, "/dev/pts/\(number)")
        }
        let (controller, path) = try openTerminal()
        let (otherController, otherPath) = try openTerminal()
        let first = open(path, O_WRONLY | O_NOCTTY)
        let second = open(path, O_WRONLY | O_NOCTTY)
        let other = open(otherPath, O_WRONLY | O_NOCTTY)
        let file = open("/proc/self/status", O_RDONLY)
        defer { [controller, otherController, first, second, other, file].forEach { close($0) } }
        XCTAssertTrue(OutputTerminals.sameDevice(first, second))
        XCTAssertFalse(OutputTerminals.sameDevice(first, other), "two terminals")
        XCTAssertFalse(OutputTerminals.sameDevice(first, file), "a regular file is no terminal")
        XCTAssertEqual(OutputTerminals.detect(stdout: first, stderr: second),
                       OutputTerminals(stdoutIsTerminal: true, stderrIsTerminal: true, shared: true))
        XCTAssertEqual(OutputTerminals.detect(stdout: first, stderr: file),
                       OutputTerminals(stdoutIsTerminal: true, stderrIsTerminal: false, shared: false))
    }

    private func choose(jsonl: Bool, _ terminals: OutputTerminals, _ display: StatusDisplay) -> ResultOutput {
        ResultOutput.choose(jsonl: jsonl, terminals: terminals, colors: true, stdout: BufferSink(), display: display)
    }

    private func line(_ result: DownloadResult, colors: Bool = false) -> String {
        HumanResultLine.format(ItemReport(position: position, displayURL: "http://example.com/a.jpg", result: result), colors: colors)
    }
}
