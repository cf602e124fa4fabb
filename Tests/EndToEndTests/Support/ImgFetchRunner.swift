import Foundation
import XCTest

/// What one run of the built `imgfetch` binary printed and returned.
struct Execution {
    let stdout: String
    let stderr: String
    let exitCode: Int32

    /// Non-empty stdout lines split at tabs: `[status, URL, path-or-error]`.
    var results: [[String]] {
        stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The result line for `url`, if any.
    func result(for url: String) -> [String]? { results.first { $0.count > 1 && $0[1] == url } }
}

/// Runs the `imgfetch` executable that SwiftPM built next to the test bundle, as a user would.
enum ImgFetchRunner {
    static var binary: URL {
        // The test bundle lives in the products directory, beside the executable.
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imgfetch")
    }

    /// Runs a bash script (for pipelines); stdout and stderr are the script's.
    static func runShell(_ script: String) throws -> Execution {
        try run(["-c", script], executable: URL(fileURLWithPath: "/bin/bash"))
    }

    /// With `timeout` (seconds), a run still going then is stopped (SIGTERM, SIGKILL 10 s later) and the
    /// test fails: a hang ends in a failure that shows what was printed, not in CI's time limit.
    static func run(_ arguments: [String], stdin: String? = nil, in directory: URL? = nil,
                    environment: [String: String]? = nil, executable: URL = binary, timeout: Double? = nil) throws -> Execution {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        if let timeout {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(100_000) }
            if process.isRunning {
                process.terminate()
                let grace = Date().addingTimeInterval(10)
                while process.isRunning && Date() < grace { usleep(100_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                XCTFail("\(([executable.lastPathComponent] + arguments.prefix(2)).joined(separator: " ")) … did not end within \(Int(timeout)) s, and was stopped")
            }
        }
        process.waitUntilExit()
        return Execution(stdout: try String(contentsOf: outURL, encoding: .utf8),
                         stderr: try String(contentsOf: errURL, encoding: .utf8),
                         exitCode: process.terminationStatus)
    }
}

/// A fresh temp directory for a test's output, removed by `remove()`.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func write(_ name: String, _ text: String) throws -> String {
        try text.write(to: file(name), atomically: true, encoding: .utf8)
        return file(name).path
    }

    /// Names in the directory, sorted, hidden files included.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// An `imgfetch` process started in the background, for signal tests.
final class RunningImgFetch {
    let process = Process()
    private let scratch: URL

    /// Starts imgfetch with `stdin` written to its standard input (then closed), or, with `input`,
    /// reading from that pipe, which the test writes and closes itself. `executable` runs another
    /// program instead (a wrapper that starts imgfetch).
    init(_ arguments: [String], stdin: String? = nil, input: Pipe? = nil, executable: URL = ImgFetchRunner.binary) throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try Data().write(to: scratch.appendingPathComponent("stdout"))
        try Data().write(to: scratch.appendingPathComponent("stderr"))
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: scratch.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: scratch.appendingPathComponent("stderr"))
        let pipe = input ?? Pipe()
        process.standardInput = pipe
        try process.run()
        guard input == nil else { return }
        if let stdin { pipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try pipe.fileHandleForWriting.close()
    }

    /// The file that receives its stdout while it runs.
    var stdoutPath: String { scratch.appendingPathComponent("stdout").path }

    /// What the process holds open under `directory` but in its cache folder `.imgfetch` (its
    /// `/proc/PID/fd` links): temp files, which read `DIR/#INODE (deleted)` when unnamed.
    func openFiles(under directory: String) -> [String] {
        let fds = "/proc/\(process.processIdentifier)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0) }
            .filter { $0.hasPrefix(directory + "/") && !$0.hasPrefix(directory + "/.imgfetch/") }
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the exit (failing the test after `timeout` seconds) and returns what it printed.
    func wait(timeout: Double = 30) throws -> Execution {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            XCTFail("imgfetch did not exit within \(timeout) s")
        }
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(at: scratch) }
        return Execution(stdout: try String(contentsOf: scratch.appendingPathComponent("stdout"), encoding: .utf8),
                         stderr: try String(contentsOf: scratch.appendingPathComponent("stderr"), encoding: .utf8),
                         exitCode: process.terminationStatus)
    }
}

/// Polls `condition` every 20 ms for up to `timeout` seconds.
func eventually(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// Runs a tool to its end and returns its stdout; its stderr is dropped.
func standardOutput(of executable: String, _ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}
