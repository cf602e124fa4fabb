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

    static func run(_ arguments: [String], stdin: String? = nil, in directory: URL? = nil,
                    environment: [String: String]? = nil) throws -> Execution {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)

        let process = Process()
        process.executableURL = binary
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
