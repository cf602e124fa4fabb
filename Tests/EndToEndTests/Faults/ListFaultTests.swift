import Foundation
import XCTest

/// Issue 6, lists and process: garbage lines are reported with their line numbers and never stop
/// the run; the list is streamed.
final class ListFaultTests: EndToEndTestCase {
    func testGarbageLinesAreReportedWithTheirNumbersAndTheRunContinues() throws {
        let data = try addJPEG("ok.jpg")
        var list = Data()
        func line(_ bytes: Data) { list.append(bytes + Data("\n".utf8)) }
        line(Data(server.url("/files/ok.jpg").utf8))                                     // 1
        let garbage: [UInt8] = (0..<200).map { (index: Int) -> UInt8 in UInt8((index * 37 + 11) % 256) }
        line(Data(garbage.filter { $0 != 0x0A }))                                        // 2 binary garbage
        line(Data(repeating: UInt8(ascii: "a"), count: 1 << 20))                         // 3 a 1 MB line
        line(Data("http://exa\0mple.com/a.jpg".utf8))                                     // 4 NUL
        line(Data("gopher://example.com/a.jpg".utf8))                                     // 5 scheme
        line(Data("http://example.com/a b.jpg".utf8))                                     // 6 space
        line(Data("http://good@/a.jpg".utf8))                                             // 7 userinfo, no host
        line(Data((server.url("/files/ok.jpg") + " out=second.jpg").utf8))               // 8
        let path = scratch.file("urls.txt")
        try list.write(to: path)

        let result = try ImgFetchRunner.run([path.path, "-o", outputDirectory])
        XCTAssertEqual(result.exitCode, 1)
        for number in 2...7 {
            XCTAssertTrue(result.stderr.contains("\(path.path):\(number): "), "line \(number) not reported:\n\(result.stderr)")
        }
        XCTAssertTrue(result.stderr.contains("\(path.path):3: line longer than"), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(path.path):5: unsupported scheme 'gopher'"), result.stderr)
        XCTAssertEqual(result.results.count, 8)
        XCTAssertEqual(result.results.filter { $0[0] == "saved" }.count, 2)
        XCTAssertEqual(try outputFiles(), ["ok.jpg", "second.jpg"])
        XCTAssertEqual(try outputData("second.jpg"), data)
        XCTAssertFalse(result.stdout.contains("\0"))
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 8, "one line per item, none split")
    }

    func testUserinfoTricksFetchTheRealHost() throws {
        _ = try addJPEG("ok.jpg")
        // `http://good.example@127.0.0.1:PORT/` is host 127.0.0.1 with user "good.example".
        let tricky = "http://good.example@127.0.0.1:\(server.port)/files/ok.jpg"
        let result = try fetch([tricky])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try server.requests(to: "/files/").count, 1)
    }

    func testDownloadsStartBeforeTheListIsFullyRead() throws {
        _ = try addJPEG("first.jpg")
        let running = try RunningImgFetchWithOpenStdin(["-", "-o", outputDirectory])
        running.write(server.url("/files/first.jpg") + "\n")
        // The first request reaches the server while stdin is still open.
        XCTAssertTrue(try eventually { try server.requests(to: "/files/first.jpg").count == 1 }, "no request before end of list")
        XCTAssertTrue(try eventually { try outputFiles().contains("first.jpg") }, "not saved before end of list")
        running.write("# more to come\n")
        running.closeInput()
        let result = try running.wait()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
    }
}

extension ListFaultTests {
    /// A list of NULs that never ends a line: said at once, and the reading stops after 64 MiB,
    /// instead of spinning on /dev/zero for ever.
    func testAListThatNeverEndsALineIsGivenUpOn() throws {
        for format in ["txt", "csv", "jsonl"] {
            let started = Date()
            let run = try ImgFetchRunner.runShell("timeout 60 '\(ImgFetchRunner.binary.path)' --input-format \(format) /dev/zero "
                                                  + "-o '\(outputDirectory)' --jsonl")
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, format)
            XCTAssertNotEqual(run.exitCode, 124, "\(format): still reading /dev/zero after a minute")
            XCTAssertNotEqual(run.exitCode, 0, format)
            XCTAssertTrue(run.stderr.contains("longer than") || run.stdout.contains("longer than"), "\(format): \(run.stderr)")
        }
    }

    /// An over-long line is reported when it passes the limit, not when (or if) it ends.
    func testAnOverlongLineIsReportedBeforeItEnds() throws {
        let input = Pipe()
        let running = try RunningImgFetch(["-", "-o", outputDirectory, "--jsonl"], input: input)
        input.fileHandleForWriting.write(Data(repeating: UInt8(ascii: "x"), count: 64 << 10))
        XCTAssertTrue(eventually(timeout: 10) {
            ((try? String(contentsOfFile: running.stdoutPath, encoding: .utf8)) ?? "").contains("line longer than")
        }, "not reported while the line goes on")
        input.fileHandleForWriting.write(Data("xxxx\n".utf8))
        try input.fileHandleForWriting.close()
        let result = try running.wait()
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 1, result.stdout)
    }
}

/// `imgfetch` with a pipe on stdin that the test writes to (and closes) while it runs.
final class RunningImgFetchWithOpenStdin {
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let process = Process()

    init(_ arguments: [String]) throws {
        process.executableURL = ImgFetchRunner.binary
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    func wait() throws -> Execution {
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Execution(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self),
                         exitCode: process.terminationStatus)
    }
}
