import Foundation
import XCTest

/// Issue 13: the web's network shape, against a real nginx over TLS with HTTP/2 (`NginxServer`):
/// streams per connection, the per-host rule, `--http1.1`, `--resolve`, resumed TLS sessions,
/// GOAWAY, stream resets, a certificate for another name, and a server that turns h2 off mid-run.
final class NetworkShapeTests: XCTestCase {
    var nginx: NginxServer!
    var scratch: ScratchDirectory!
    /// A valid JPEG of noise, about 70 KB, so that `/slow/` takes about a second to send it.
    static let largeJPEG = Result { try NoiseJPEG.make(width: 240, height: 240) }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        nginx?.stop()
        scratch?.remove()
    }

    override class func tearDown() {
        SelfSignedCertificate.remove(SelfSignedCertificate.nginx)
    }

    private func start(_ settings: NginxServer.Settings = NginxServer.Settings()) throws {
        nginx = try NginxServer(settings)
        try nginx.addFile("large.jpg", try Self.largeJPEG.get())
        try nginx.addFile("small.jpg", try smallJPEG())
    }

    private func smallJPEG() throws -> Data {
        let server = try TestServer()
        defer { server.stop() }
        let samples = try server.addSamples(count: 1, seed: 7)
        return try server.fileData(samples.first { $0.hasSuffix(".jpg") }!)
    }

    private var output: String { scratch.file("out").path }

    /// Runs imgfetch with `--jsonl` on `lines`, trusting nginx's certificate.
    private func fetch(_ lines: [String], _ arguments: [String] = []) throws -> (execution: Execution, results: [[String: Any]]) {
        let list = try scratch.write("urls.txt", lines.joined(separator: "\n") + "\n")
        let execution = try ImgFetchRunner.run([list, "-o", output, "--jsonl", "--cacert", nginx.certificateFile] + arguments)
        let results = try execution.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        return (execution, results)
    }

    private func assertAllSaved(_ run: (execution: Execution, results: [[String: Any]]), count: Int, httpVersion: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(run.execution.exitCode, 0, run.execution.stderr, file: file, line: line)
        XCTAssertEqual(run.results.count, count, file: file, line: line)
        XCTAssertEqual(Set(run.results.map { $0["status"] as? String }), ["saved"], run.execution.stdout, file: file, line: line)
        XCTAssertEqual(Set(run.results.map { $0["http_version"] as? String }), [httpVersion], file: file, line: line)
        let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).filter { $0.hasSuffix(".part") }
        XCTAssertEqual(leftovers, [], file: file, line: line)
    }

    /// `count` slow URLs on one host, each saved under its own name.
    private func slowURLs(_ count: Int, host: String = "127.0.0.1") -> [String] {
        (1...count).map { nginx.https("/slow/large.jpg?n=\($0)", host: host) + " out=large-\($0).jpg" }
    }

    // MARK: - HTTP/2 and the per-host rule

    func testHTTP2HostRunsMoreTransfersThanPerHostAsStreamsOfOneConnection() throws {
        try start()
        let run = try fetch(slowURLs(24), ["-j", "24"])
        assertAllSaved(run, count: 24, httpVersion: "2")
        let log = try nginx.log()
        XCTAssertEqual(log.count, 24)
        XCTAssertEqual(Set(log.map(\.protocolName)), ["HTTP/2.0"])
        // PIPEWAIT: the first transfers wait for the first connection instead of opening their own.
        XCTAssertEqual(log.connections.count, 1, "one connection carries every stream")
        XCTAssertEqual(log.map(\.connectionRequest).max(), 24)
        // --per-host 6 caps connections, not streams: far more than 6 transfers ran at once.
        XCTAssertGreaterThan(log.peakConcurrency, 12)
    }

    func testHTTP11OptionKeepsOneTransferPerConnectionAndPerHostConnections() throws {
        try start()
        let urls = (1...12).map { nginx.https("/files/small.jpg?n=\($0)") + " out=small-\($0).jpg" }
        let run = try fetch(urls, ["-j", "12", "--per-host", "3", "--http1.1"])
        assertAllSaved(run, count: 12, httpVersion: "1.1")
        let log = try nginx.log()
        XCTAssertEqual(Set(log.map(\.protocolName)), ["HTTP/1.1"])
        // Over HTTP/1.1 a connection carries one request at a time: 3 connections are 3 transfers.
        XCTAssertLessThanOrEqual(log.peakConnections, 3)
    }

    func testPlainHTTPHostIsNotMultiplexed() throws {
        try start()
        let urls = (1...8).map { nginx.http("/files/small.jpg?n=\($0)") + " out=small-\($0).jpg" }
        let run = try fetch(urls, ["-j", "8", "--per-host", "2"])
        assertAllSaved(run, count: 8, httpVersion: "1.1")
        XCTAssertLessThanOrEqual(try nginx.log().peakConnections, 2)
    }

    func testServerStreamLimitBelowLibcurlsQueuesTheRestWithoutFailures() throws {
        // nginx allows 4 streams per connection: libcurl opens more connections (up to --per-host)
        // and holds the transfers beyond them until a stream is free.
        try start(NginxServer.Settings(maxConcurrentStreams: 4))
        let run = try fetch(slowURLs(16), ["-j", "16", "--per-host", "2"])
        assertAllSaved(run, count: 16, httpVersion: "2")
        let log = try nginx.log()
        XCTAssertLessThanOrEqual(log.peakConnections, 2)
        // 2 connections × 4 streams; nginx logs in milliseconds, so a stream that ends and the one
        // that replaces it within the same millisecond can both count: allow that much slack.
        XCTAssertLessThanOrEqual(log.peakConcurrency, 8 + 2)
    }

    // MARK: - Connections ending: GOAWAY, resumed sessions, a server that turns h2 off

    func testGoawayEndsConnectionsAndEveryItemIsStillSaved() throws {
        // After 3 requests nginx ends each HTTP/2 connection with GOAWAY: 12 items need 4 connections.
        try start(NginxServer.Settings(keepaliveRequests: 3))
        let urls = (1...12).map { nginx.https("/files/small.jpg?n=\($0)") + " out=small-\($0).jpg" }
        let run = try fetch(urls, ["-j", "4", "--per-host", "1"])
        assertAllSaved(run, count: 12, httpVersion: "2")
        let log = try nginx.log()
        XCTAssertEqual(log.count, 12, "every stream that GOAWAY refused was sent again, once")
        XCTAssertGreaterThanOrEqual(log.connections.count, 4)
    }

    func testReconnectsResumeTheTLSSession() throws {
        // nginx closes each HTTP/1.1 connection after 3 requests. The run's share handle keeps the
        // TLS session, so only the first connection pays a full handshake. (Over HTTP/2, libcurl
        // 7.88 with OpenSSL 3 does not resume after a GOAWAY, curl's own tool neither: the test
        // above checks only that nothing is lost there.)
        try start(NginxServer.Settings(keepaliveRequests: 3))
        let urls = (1...12).map { nginx.https("/files/small.jpg?n=\($0)") + " out=small-\($0).jpg" }
        let run = try fetch(urls, ["-j", "4", "--per-host", "2", "--http1.1"])
        assertAllSaved(run, count: 12, httpVersion: "1.1")
        let byConnection = Dictionary(grouping: try nginx.log(), by: \.connection)
        XCTAssertGreaterThanOrEqual(byConnection.count, 4)
        let full = byConnection.values.filter { !$0[0].sessionReused }
        XCTAssertLessThanOrEqual(full.count, 2, "connections with a full handshake: \(full.count) of \(byConnection.count)")
    }

    func testHostsShareTLSSessionsOnlyWithinAHostName() throws {
        // Two host names on one server: each gets one connection, and neither reuses the other's session.
        try start()
        let hosts = ["a.imgfetch.test", "b.imgfetch.test"]
        let urls = hosts.flatMap { host in (1...3).map { nginx.https("/files/small.jpg?n=\($0)", host: host) + " out=\(host)-\($0).jpg" } }
        let run = try fetch(urls, nginx.resolveArguments(hosts))
        assertAllSaved(run, count: 6, httpVersion: "2")
        let log = try nginx.log()
        XCTAssertEqual(Set(log.map(\.host)), Set(hosts))
        XCTAssertEqual(log.connections.count, 2)
    }

    func testServerThatTurnsHTTP2OffMidRunServesEveryItem() throws {
        try start()
        let list = try scratch.write("urls.txt", slowURLs(16).joined(separator: "\n") + "\n")
        let running = try RunningImgFetch([list, "-o", output, "--jsonl", "--cacert", nginx.certificateFile, "-j", "4",
                                           "--per-host", "2"])
        XCTAssertTrue(try eventually { try nginx.log().count >= 2 }, "the first transfers finish over HTTP/2")
        try nginx.reload { $0.http2 = false }
        let execution = try running.wait(timeout: 60)
        XCTAssertEqual(execution.exitCode, 0, execution.stderr)
        let versions = execution.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["http_version"] as? String
        }
        XCTAssertEqual(versions.count, 16)
        XCTAssertTrue(versions.contains("2"))
        XCTAssertTrue(versions.contains("1.1"), "after the reload new connections speak HTTP/1.1: \(versions)")
        XCTAssertLessThanOrEqual(try nginx.log().filter { $0.protocolName == "HTTP/1.1" }.peakConnections, 2)
    }

    // MARK: - Faults

    func testStreamResetIsRetriedThenFailsClearly() throws {
        try start()
        let reset = nginx.https("/reset")
        let run = try fetch([reset, nginx.https("/files/small.jpg")], ["--retries", "1"])
        XCTAssertEqual(run.execution.exitCode, 1)
        let failed = try XCTUnwrap(run.results.first { $0["url"] as? String == reset })
        XCTAssertEqual(failed["status"] as? String, "failed")
        XCTAssertEqual(failed["attempts"] as? Int, 2)
        let error = try XCTUnwrap(failed["error"] as? [String: Any])
        XCTAssertEqual(error["class"] as? String, "network")
        XCTAssertTrue((error["message"] as? String ?? "").hasPrefix("HTTP/2 stream failed: "), "\(error)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output).filter { !$0.hasPrefix(".imgfetch") }, ["small.jpg"])
    }

    func testCertificateForAnotherNameFailsAsTLS() throws {
        try start()
        let url = nginx.https("/files/small.jpg", host: "elsewhere.example")
        let run = try fetch([url], ["--resolve", "elsewhere.example:\(nginx.tlsPort):127.0.0.1"])
        XCTAssertEqual(run.execution.exitCode, 1)
        let error = try XCTUnwrap(run.results.first?["error"] as? [String: Any])
        XCTAssertEqual(error["class"] as? String, "tls")
        XCTAssertEqual(error["message"] as? String, "TLS certificate not trusted: SSL: no alternative certificate subject name "
                       + "matches target host name 'elsewhere.example' (use --cacert FILE to trust it, or --insecure)")
        XCTAssertEqual(try nginx.log().count, 0)
    }

    // MARK: - Names

    func testResolveSendsTheHostNameToTheGivenAddress() throws {
        try start()
        let host = "img-17.imgfetch.test"
        let urls = [nginx.https("/files/small.jpg", host: host) + " out=tls.jpg", nginx.http("/files/small.jpg", host: host) + " out=plain.jpg"]
        let run = try fetch(urls, nginx.resolveArguments([host]))
        XCTAssertEqual(run.execution.exitCode, 0, run.execution.stderr)
        let versions = Dictionary(uniqueKeysWithValues: run.results.map { ($0["url"] as? String ?? "", $0["http_version"] as? String) })
        XCTAssertEqual(versions, [nginx.https("/files/small.jpg", host: host): "2", nginx.http("/files/small.jpg", host: host): "1.1"])
        XCTAssertEqual(try nginx.log().map(\.host), [host, host])
    }

    func testUnresolvableHostIsItsOwnErrorClass() throws {
        try start()
        // .invalid never resolves (RFC 6761): the resolver answers at once.
        let url = "https://nonexistent.invalid/a.jpg"
        let run = try fetch([url, nginx.https("/files/small.jpg")])
        XCTAssertEqual(run.execution.exitCode, 1)
        // Results come as items finish: on a loaded machine the other item may finish first.
        let error = try XCTUnwrap(run.results.first { $0["url"] as? String == url }?["error"] as? [String: Any], "\(run.results)")
        XCTAssertEqual(error["class"] as? String, "dns")
        XCTAssertEqual(error["message"] as? String, "could not resolve host nonexistent.invalid")
        XCTAssertTrue(run.execution.stderr.contains(": 1 saved, 0 skipped, 1 failed (1 dns); "), run.execution.stderr)
    }
}

/// A valid baseline JPEG of random pixels (which compress badly, so it stays large), made by cjpeg.
enum NoiseJPEG {
    static func make(width: Int, height: Int, seed: UInt64 = 13) throws -> Data {
        var state = seed
        var ppm = Data("P6\n\(width) \(height)\n255\n".utf8)
        for _ in 0..<(width * height * 3) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            ppm.append(UInt8(truncatingIfNeeded: state >> 56))
        }
        // Through a file: with both pipes, cjpeg could block writing while this wrote its input.
        let ppmFile = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-noise-\(UUID().uuidString).ppm")
        try ppm.write(to: ppmFile)
        defer { try? FileManager.default.removeItem(at: ppmFile) }
        let cjpeg = Process()
        cjpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cjpeg.arguments = ["cjpeg", "-quality", "95", ppmFile.path]
        let output = Pipe()
        cjpeg.standardOutput = output
        try cjpeg.run()
        let jpeg = output.fileHandleForReading.readDataToEndOfFile()
        cjpeg.waitUntilExit()
        guard cjpeg.terminationStatus == 0, jpeg.count > 40 << 10 else { throw TestServerError.didNotStart("cjpeg failed") }
        return jpeg
    }
}
