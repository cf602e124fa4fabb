import Foundation
import XCTest

/// A `Scripts/test-support/test_server.py` run with `--tls-cert/--tls-key`: one loopback port that speaks HTTPS
/// to a client that starts a TLS handshake and plain HTTP to any other, so `https://127.0.0.1:PORT`
/// and `http://127.0.0.1:PORT` differ in the scheme alone. Its certificate is self-signed for
/// 127.0.0.1 (`SelfSignedCertificate.shared`); `certificateFile` doubles as a `--cacert`.
/// Stopped (and its directory removed) by `stop()`.
final class TransportTLSServer {
    let port: Int
    let root: URL
    /// The PEM certificate the server presents (self-signed: it is its own CA).
    let certificateFile: String
    private let logFile: URL
    private let process = Process()

    init() throws {
        let certificate = try SelfSignedCertificate.shared.get()
        certificateFile = certificate.certificateFile
        root = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-tls-server-\(UUID().uuidString)")
        let files = root.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        logFile = root.appendingPathComponent("requests.jsonl")

        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestServer.packageRoot.appendingPathComponent("Scripts/test-support/test_server.py").path,
                             "--root", files.path, "--log", logFile.path, "--max-seconds", "600",
                             "--tls-cert", certificate.certificateFile, "--tls-key", certificate.keyFile]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.readLine(), as: UTF8.self)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw TestServerError.didNotStart(line)
        }
        self.port = port
    }

    func https(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    func http(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Writes a file the server serves at `/files/NAME` over both schemes.
    func addFile(_ name: String, _ data: Data) throws {
        try data.write(to: root.appendingPathComponent("files").appendingPathComponent(name))
    }

    /// Requests whose path starts with `prefix`, in order, each with the scheme it came over.
    func requests(to prefix: String) throws -> [SchemeLoggedRequest] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n"))
            .filter { (try? JSONDecoder().decode(LoggedEvent.self, from: Data($0)))?.event == nil }  // "sent" lines
            .map { try JSONDecoder().decode(SchemeLoggedRequest.self, from: Data($0)) }
            .filter { $0.path.hasPrefix(prefix) }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }
}

/// A one-day RSA certificate and its key, made by `openssl req -x509`; the certificate is its own
/// CA, so it doubles as a `--cacert`.
///
/// Each kind is made once per test process (key generation takes a noticeable fraction of a
/// second) in a directory named after the process, which `remove()` deletes when the test class
/// is done.
struct SelfSignedCertificate: Sendable {
    let directory: URL
    let certificateFile: String
    let keyFile: String

    /// For IP 127.0.0.1 only (`TransportTLSServer`).
    static let shared = Result { try SelfSignedCertificate(kind: "tls", subject: "127.0.0.1", altNames: "IP:127.0.0.1") }
    /// For `*.imgfetch.test`, `imgfetch.test` and 127.0.0.1 (`NginxServer`).
    static let nginx = Result {
        try SelfSignedCertificate(kind: "nginx", subject: NginxServer.domain,
                                  altNames: "DNS:*.\(NginxServer.domain),DNS:\(NginxServer.domain),IP:127.0.0.1")
    }

    private init(kind: String, subject: String, altNames: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-\(kind)-cert-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificateFile = directory.appendingPathComponent("cert.pem").path
        keyFile = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(subject)",
                             "-addext", "subjectAltName=\(altNames)", "-days", "1", "-keyout", keyFile, "-out", certificateFile]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestServerError.didNotStart("openssl req failed") }
    }

    /// Deletes the certificate made for `shared`, if it was made.
    static func remove(_ made: Result<SelfSignedCertificate, Error>) {
        if let certificate = try? made.get() { try? FileManager.default.removeItem(at: certificate.directory) }
    }
}

/// Any line of the server's log: `event` is set on the lines that are no request.
private struct LoggedEvent: Decodable {
    let event: String?
}

/// A request of the dual-scheme server's log: `tls` says whether it came over HTTPS.
struct SchemeLoggedRequest: Decodable {
    let path: String
    let headers: [String: String]
    let tls: Bool

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

private extension FileHandle {
    /// Bytes up to (not including) the next newline, or to the end of the stream.
    func readLine() -> [UInt8] {
        var bytes: [UInt8] = []
        while let byte = readData(ofLength: 1).first, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        return bytes
    }
}
