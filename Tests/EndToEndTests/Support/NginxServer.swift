import Foundation
import XCTest

/// A real nginx on loopback, as image CDNs serve: TLS with HTTP/2 (ALPN) on one port, plain
/// HTTP/1.1 on another, both serving one temp directory. Its access log records, per request, the
/// connection, the request's number on it, whether the TLS session was resumed, the protocol and
/// the Host header, so tests count connections, streams and handshakes the way the server saw them.
///
/// Locations: `/files/NAME` serves the directory; `/slow/NAME` the same at 32 KB/s (nginx sends
/// the first second's worth at once, so only bodies over 32 KB take time); `/reset` answers no
/// response (`return 444`: a closed connection over HTTP/1.1, a `RST_STREAM` over HTTP/2).
/// Stopped, and its directory removed, by `stop()`.
final class NginxServer {
    /// What may differ between tests' servers.
    struct Settings {
        /// Requests one connection serves before nginx closes it (for HTTP/2: sends GOAWAY).
        var keepaliveRequests = 1000
        /// nginx's SETTINGS_MAX_CONCURRENT_STREAMS.
        var maxConcurrentStreams = 128
        /// Whether the TLS port offers h2.
        var http2 = true
    }

    let tlsPort: Int
    let plainPort: Int
    let prefix: URL
    /// The PEM certificate the TLS port presents; it is its own CA, so it doubles as a `--cacert`.
    let certificateFile: String
    private var settings: Settings
    private let process = Process()

    /// Host names the certificate covers: any `NAME.imgfetch.test`, and 127.0.0.1.
    static let domain = "imgfetch.test"

    init(_ settings: Settings = Settings()) throws {
        let certificate = try SelfSignedCertificate.nginx.get()
        certificateFile = certificate.certificateFile
        self.settings = settings
        prefix = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-nginx-\(UUID().uuidString)")
        for sub in ["files", "tmp"] {
            try FileManager.default.createDirectory(at: prefix.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        tlsPort = try freeLoopbackPort()
        plainPort = try freeLoopbackPort()
        try writeConfiguration(keyFile: certificate.keyFile)
        try Data().write(to: accessLog)
        process.executableURL = URL(fileURLWithPath: try Self.nginxBinary())
        process.arguments = ["-p", prefix.path, "-c", configurationFile.path, "-e", prefix.appendingPathComponent("error.log").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard eventually(timeout: 10, { !process.isRunning || (canConnect(tlsPort) && canConnect(plainPort)) }), process.isRunning else {
            let log = (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            stop()
            throw TestServerError.didNotStart("nginx: \(log)")
        }
    }

    private static func nginxBinary() throws -> String {
        for path in ["/usr/sbin/nginx", "/usr/bin/nginx"] where FileManager.default.isExecutableFile(atPath: path) { return path }
        throw TestServerError.didNotStart("nginx is not installed (Scripts/install-deps installs it)")
    }

    private var configurationFile: URL { prefix.appendingPathComponent("nginx.conf") }
    private var accessLog: URL { prefix.appendingPathComponent("access.log") }
    private var files: URL { prefix.appendingPathComponent("files") }

    private func writeConfiguration(keyFile: String) throws {
        let tmp = prefix.appendingPathComponent("tmp").path
        let temps = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(tmp);" }.joined(separator: " ")
        let config = """
            \(geteuid() == 0 ? "user root;" : "")
            worker_processes 1;
            daemon off;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/error.log warn;
            events { worker_connections 4096; }
            http {
                \(temps)
                log_format shape '$connection\\t$connection_requests\\t$ssl_session_reused\\t$server_protocol\\t$host\\t$request_uri\\t$status\\t$msec\\t$request_time';
                access_log \(accessLog.path) shape;
                default_type application/octet-stream;
                keepalive_requests \(settings.keepaliveRequests);
                http2_max_concurrent_streams \(settings.maxConcurrentStreams);
                ssl_certificate \(certificateFile);
                ssl_certificate_key \(keyFile);
                ssl_session_cache shared:imgfetch:1m;
                server {
                    listen 127.0.0.1:\(tlsPort) ssl\(settings.http2 ? " http2" : "");
                    listen 127.0.0.1:\(plainPort);
                    location /files/ { alias \(files.path)/; }
                    location /slow/ { alias \(files.path)/; limit_rate 32k; }
                    location = /reset { return 444; }
                }
            }

            """
        try config.write(to: configurationFile, atomically: true, encoding: .utf8)
    }

    /// `https://HOST:PORT/PATH` on the TLS port; HOST defaults to 127.0.0.1.
    func https(_ path: String, host: String = "127.0.0.1") -> String { "https://\(host):\(tlsPort)\(path)" }

    /// `http://HOST:PORT/PATH` on the plain port.
    func http(_ path: String, host: String = "127.0.0.1") -> String { "http://\(host):\(plainPort)\(path)" }

    /// `--resolve` arguments that send `NAME.imgfetch.test` on both ports to 127.0.0.1.
    func resolveArguments(_ names: [String]) -> [String] {
        names.flatMap { name in
            ["--resolve", "\(name):\(tlsPort):127.0.0.1", "--resolve", "\(name):\(plainPort):127.0.0.1"]
        }
    }

    /// Writes a file served at `/files/NAME` and `/slow/NAME`.
    func addFile(_ name: String, _ data: Data) throws {
        try data.write(to: files.appendingPathComponent(name))
    }

    /// Changes the settings and reloads nginx (SIGHUP): new connections get the new ones, while
    /// the old workers finish their requests (an HTTP/2 connection gets a GOAWAY).
    func reload(_ change: (inout Settings) -> Void) throws {
        change(&settings)
        try writeConfiguration(keyFile: try SelfSignedCertificate.nginx.get().keyFile)
        kill(process.processIdentifier, SIGHUP)
    }

    /// Every request logged so far, in the order nginx finished them.
    func log() throws -> [NginxRequest] {
        let text = try String(contentsOf: accessLog, encoding: .utf8)
        return text.split(separator: "\n").compactMap(NginxRequest.init)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: prefix)
    }
}

/// One line of `NginxServer`'s access log.
struct NginxRequest {
    let connection: Int
    /// The request's number on its connection (1 for the first).
    let connectionRequest: Int
    /// The TLS session was resumed rather than negotiated in full.
    let sessionReused: Bool
    /// `HTTP/2.0` or `HTTP/1.1`.
    let protocolName: String
    let host: String
    let uri: String
    let status: Int
    let start: Double
    let end: Double

    init?(_ line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 9, let connection = Int(fields[0]), let number = Int(fields[1]), let status = Int(fields[6]),
              let end = Double(fields[7]), let duration = Double(fields[8]) else { return nil }
        self.connection = connection
        connectionRequest = number
        sessionReused = fields[2] == "r"
        protocolName = fields[3]
        host = fields[4]
        uri = fields[5]
        self.status = status
        start = end - duration
        self.end = end
    }
}

extension Array where Element == NginxRequest {
    /// Distinct connections the requests came over.
    var connections: Set<Int> { Set(map(\.connection)) }

    /// The most requests that were in progress at one moment.
    var peakConcurrency: Int { Self.peakOverlap(map { ($0.start, $0.end) }) }

    /// The most connections that were serving requests at one moment (each from its first
    /// request's start to its last one's end).
    var peakConnections: Int {
        Self.peakOverlap(Dictionary(grouping: self, by: \.connection).values.map { requests in
            (requests.map(\.start).min()!, requests.map(\.end).max()!)
        })
    }

    private static func peakOverlap(_ spans: [(start: Double, end: Double)]) -> Int {
        // An end sorts before a start at the same moment: back-to-back spans do not overlap.
        let events = spans.flatMap { [($0.start, 1), ($0.end, -1)] }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var current = 0
        var peak = 0
        for event in events {
            current += event.1
            peak = Swift.max(peak, current)
        }
        return peak
    }
}

/// A loopback port that was free a moment ago (the kernel's choice for a socket bound to port 0).
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestServerError.didNotStart("socket: \(errno)") }
    defer { close(descriptor) }
    var address = loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw TestServerError.didNotStart("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func canConnect(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = loopbackAddress(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

private func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}
