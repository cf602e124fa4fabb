import Foundation
import XCTest

/// Issue 6, Transport: certificate verification (`--insecure`, `--cacert`) and https→http downgrades,
/// against a loopback HTTPS server whose self-signed certificate each test generates.
extension TransportFaultTests {
    // MARK: - TLS

    func testSelfSignedCertificateFailsByDefault() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--retries", "2"])
        assertFailed(run, url, "TLS certificate not trusted: SSL certificate problem: self-signed certificate "
                     + "(use --cacert FILE to trust it, or --insecure)", kind: "tls", attempts: 1)
        XCTAssertEqual(try tls.requests(to: "/").count, 0, "no request may go over an unverified connection")
    }

    func testAResetOverTLSIsReportedAsOverPlainTCP() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/reset/300/files/a.jpg")
        let run = try fetchBesideGoodURL([url], ["--insecure", "--retries", "1"])
        assertFailed(run, url, "connection reset by the server", kind: "network", attempts: 2)
    }

    func testSelfSignedCertificateIsAcceptedWithInsecure() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/files/a.jpg")
        let run = try fetchBesideGoodURL([url + " out=a.jpg"], ["--insecure"], alsoSaved: ["a.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        XCTAssertEqual(try outputData("a.jpg"), jpeg)
        XCTAssertEqual(try tls.requests(to: "/files/a.jpg").map(\.tls), [true])
    }

    func testSelfSignedCertificateIsAcceptedWithCACert() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/files/a.jpg")
        let run = try fetchBesideGoodURL([url + " out=a.jpg"], ["--cacert", tls.certificateFile], alsoSaved: ["a.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        XCTAssertEqual(try outputData("a.jpg"), jpeg)
        XCTAssertEqual(try tls.requests(to: "/files/a.jpg").map(\.tls), [true])
    }

    func testCACertStillChecksTheHostName() throws {
        // The certificate names IP 127.0.0.1 only: trusting it must not make it valid for localhost.
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = "https://localhost:\(tls.port)/files/a.jpg"
        let run = try fetchBesideGoodURL([url], ["--cacert", tls.certificateFile, "--retries", "2"])
        assertFailed(run, url, "TLS certificate not trusted: SSL: no alternative certificate subject name matches target host name 'localhost' "
                     + "(use --cacert FILE to trust it, or --insecure)", kind: "tls", attempts: 1)
    }

    func testUnreadableCACertFileStopsTheRunBeforeAnyDownload() throws {
        let missing = scratch.file("no-such-ca.pem").path
        let result = try fetch([goodURL], ["--cacert", missing])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.stderr, "imgfetch: cannot read --cacert '\(missing)': No such file or directory\n")
        XCTAssertEqual(try server.requests().count, 0)
        XCTAssertEqual(try outputFiles(), [])
    }

    // MARK: - Downgrade

    func testHTTPSToHTTPDowngradeIsRefused() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/redirect-to?url=" + Self.percentEncoded(tls.http("/files/a.jpg")))
        let run = try fetchBesideGoodURL([url], ["--cacert", tls.certificateFile, "--retries", "2"])
        assertFailed(run, url, "redirect from https to http refused (use --allow-downgrade to follow it)", kind: "redirect", attempts: 1)
        XCTAssertEqual(try tls.requests(to: "/files/a.jpg").count, 0)
    }

    func testHTTPSToHTTPDowngradeIsFollowedWithAllowDowngrade() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("a.jpg", jpeg)
        let url = tls.https("/redirect-to?url=" + Self.percentEncoded(tls.http("/files/a.jpg")))
        let run = try fetchBesideGoodURL([url + " out=a.jpg"], Self.secretOptions + ["--cacert", tls.certificateFile, "--allow-downgrade"],
                                         alsoSaved: ["a.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        XCTAssertEqual(try outputData("a.jpg"), jpeg)
        let hop = try XCTUnwrap(tls.requests(to: "/files/a.jpg").first)
        XCTAssertFalse(hop.tls)
        // A downgrade is a change of origin too: the secrets stay behind.
        assertCarriesSecrets(try XCTUnwrap(tls.requests(to: "/redirect-to").first).header)
        assertCarriesNoSecrets(hop.header)
    }
}
