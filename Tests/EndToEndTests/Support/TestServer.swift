import Foundation
import XCTest

/// A running `Scripts/test-support/test_server.py` on a free loopback port, serving a fresh temp directory,
/// with its request log. Stopped (and its directory removed) by `stop()`.
final class TestServer {
    let root: URL
    let port: Int
    private let logFile: URL
    private let process: Process

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    init(bind: String = "127.0.0.1") throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        logFile = root.appendingPathComponent(".requests.jsonl")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.packageRoot.appendingPathComponent("Scripts/test-support/test_server.py").path,
                             "--root", root.path, "--log", logFile.path, "--bind", bind, "--max-seconds", "600"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = Self.readLine(output.fileHandleForReading)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw TestServerError.didNotStart(line)
        }
        self.port = port
    }

    private static func readLine(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    var base: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> String { base + path }

    /// Writes a file the server will serve at `/files/NAME`.
    @discardableResult
    func addFile(_ name: String, _ data: Data) throws -> Data {
        try data.write(to: root.appendingPathComponent(name))
        return data
    }

    /// Generates the sample images (real PNGs and JPEGs) into the server's directory; returns their names.
    func addSamples(count: Int = 3, seed: Int = 1) throws -> [String] {
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        maker.arguments = ["python3", Self.packageRoot.appendingPathComponent("Scripts/test-support/make_samples.py").path,
                           root.path, "--count", String(count), "--seed", String(seed)]
        try maker.run()
        maker.waitUntilExit()
        guard maker.terminationStatus == 0 else { throw TestServerError.samplesFailed }
        return try FileManager.default.contentsOfDirectory(atPath: root.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
    }

    /// Sets a served file's modification time (its Last-Modified) `days` ago; negative is ahead.
    func setModificationDate(of name: String, daysAgo days: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-days * 86400)],
                                              ofItemAtPath: root.appendingPathComponent(name).path)
    }

    func fileData(_ name: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(name))
    }

    /// Every request the server received so far, in order.
    func requests() throws -> [LoggedRequest] {
        try logLines().filter { $0.event == nil }
    }

    /// Body bytes the server sent for each response that is over, by request path, in order.
    func sentBodies() throws -> [(path: String, bytes: Int)] {
        try logLines().filter { $0.event == "sent" }.map { ($0.path, $0.bodyBytes ?? 0) }
    }

    private func logLines() throws -> [LoggedRequest] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(LoggedRequest.self, from: Data($0)) }
    }

    /// Requests whose path starts with `prefix`.
    func requests(to prefix: String) throws -> [LoggedRequest] {
        try requests().filter { $0.path.hasPrefix(prefix) }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }
}

struct LoggedRequest: Decodable {
    let method: String
    let path: String
    let headers: [String: String]
    let time: Double
    /// "sent" for the line logged once a response is over; nil for a request.
    let event: String?
    let bodyBytes: Int?

    enum CodingKeys: String, CodingKey {
        case method, path, headers, time, event
        case bodyBytes = "body_bytes"
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        path = try container.decode(String.self, forKey: .path)
        headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
        time = try container.decode(Double.self, forKey: .time)
        event = try container.decodeIfPresent(String.self, forKey: .event)
        bodyBytes = try container.decodeIfPresent(Int.self, forKey: .bodyBytes)
    }

    /// A header by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

enum TestServerError: Error {
    case didNotStart(String)
    case samplesFailed
}
