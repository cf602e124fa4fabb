import Foundation
import XCTest

/// Issue 6, Transport: redirect loops, chains and schemes, and what credentials may follow a redirect.
extension TransportFaultTests {
    // MARK: - Redirects

    func testRedirectLoopFailsAfterTenHops() throws {
        let url = server.url("/loop/x")
        let run = try fetchBesideGoodURL([url], ["--retries", "2"])
        assertFailed(run, url, "too many redirects (more than 10)", kind: "redirect", attempts: 1)
        // The list URL and ten redirects followed; the eleventh is refused without a request.
        XCTAssertEqual(try server.requests(to: "/loop/").count, 11)
    }

    func testRedirectChainOfTenIsFollowedAndElevenIsNot() throws {
        try serve("a.jpg")
        let ten = server.url("/redirect/10/files/a.jpg")
        let eleven = server.url("/redirect/11/files/a.jpg")
        let run = try fetchBesideGoodURL([ten + " out=ten.jpg", eleven + " out=eleven.jpg"], ["--retries", "2"],
                                         alsoSaved: ["ten.jpg"])
        assertSaved(run, ten, attempts: 1)
        XCTAssertEqual(try outputData("ten.jpg"), jpeg)
        assertFailed(run, eleven, "too many redirects (more than 10)", kind: "redirect", attempts: 1)
        XCTAssertEqual(try server.requests(to: "/redirect/11/").count, 1)
        XCTAssertEqual(try server.requests(to: "/redirect/0/files/a.jpg").count, 1, "only the ten-hop chain got there")
    }

    func testRedirectToOtherSchemesIsRefused() throws {
        let targets = ["file": "file:///etc/passwd",
                       "ftp": "ftp://127.0.0.1:\(server.port)/files/good.jpg",
                       "gopher": "gopher://127.0.0.1:\(server.port)/1",
                       "dict": "dict://127.0.0.1:\(server.port)/d:jpeg"]
        let urls = targets.mapValues { server.url("/redirect-to?url=" + Self.percentEncoded($0)) }
        let run = try fetchBesideGoodURL(urls.values.sorted(), ["--retries", "2"])
        for (scheme, url) in urls {
            assertFailed(run, url, "redirect to \(scheme): refused (only http and https are followed)",
                         kind: "redirect", attempts: 1)
        }
        // The server saw the list URLs and nothing else.
        XCTAssertEqual(try server.requests().count, urls.count + 1)
    }

    // MARK: - Credentials on redirects

    func testCredentialsAndHeadersDroppedOnCrossSchemeRedirect() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("x.jpg", jpeg)
        // Same host, same port, only the scheme differs.
        let url = tls.http("/redirect-to?url=" + Self.percentEncoded(tls.https("/files/x.jpg")))
        let run = try fetchBesideGoodURL([url + " out=x.jpg"], Self.secretOptions + ["--cacert", tls.certificateFile],
                                         alsoSaved: ["x.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        let first = try XCTUnwrap(tls.requests(to: "/redirect-to").first)
        XCTAssertFalse(first.tls)
        assertCarriesSecrets(first.header)
        let hop = try XCTUnwrap(tls.requests(to: "/files/x.jpg").first)
        XCTAssertTrue(hop.tls)
        assertCarriesNoSecrets(hop.header)
    }

    func testCredentialsAndHeadersDroppedOnCrossHostRedirect() throws {
        try serve("x.jpg")
        // Same scheme, same port, another host name (localhost resolves to this loopback server).
        let url = server.url("/redirect-to?url=" + Self.percentEncoded("http://localhost:\(server.port)/files/x.jpg"))
        let run = try fetchBesideGoodURL([url + " out=x.jpg"], Self.secretOptions, alsoSaved: ["x.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        assertCarriesSecrets(try XCTUnwrap(server.requests(to: "/redirect-to").first).header)
        let hop = try XCTUnwrap(server.requests(to: "/files/x.jpg").first)
        XCTAssertEqual(hop.header("Host"), "localhost:\(server.port)")
        assertCarriesNoSecrets(hop.header)
    }

    func testCustomAuthorizationHeaderDroppedOnCrossPortRedirect() throws {
        // RequestOptionTests.testCredentialsAndHeadersStayOnTheirOrigin covers -u, X-Api-Key and Cookie
        // across ports; here the credential is a -H Authorization header, which libcurl alone would keep.
        let other = try TestServer()
        defer { other.stop() }
        try other.addFile("x.jpg", jpeg)
        let url = server.url("/redirect-to?url=" + Self.percentEncoded(other.url("/files/x.jpg")))
        let run = try fetchBesideGoodURL([url + " out=x.jpg"], ["-H", "Authorization: Bearer tok-secret-1"],
                                         alsoSaved: ["x.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        XCTAssertEqual(try server.requests(to: "/redirect-to").first?.header("Authorization"), "Bearer tok-secret-1")
        XCTAssertNil(try XCTUnwrap(other.requests(to: "/files/x.jpg").first).header("Authorization"))
    }

    func testCredentialsStayOffWhenTheChainReturnsToItsOrigin() throws {
        try serve("x.jpg")
        let back = server.url("/files/x.jpg")
        let away = "http://localhost:\(server.port)/redirect-to?url=" + Self.percentEncoded(back)
        let url = server.url("/redirect-to?url=" + Self.percentEncoded(away))
        let run = try fetchBesideGoodURL([url + " out=x.jpg"], Self.secretOptions, alsoSaved: ["x.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        let hops = try server.requests(to: "/redirect-to")
        XCTAssertEqual(hops.count, 2)
        assertCarriesSecrets(hops[0].header)
        assertCarriesNoSecrets(hops[1].header)
        // Back on the list URL's origin, but a server on the way chose the URL: still nothing.
        assertCarriesNoSecrets(try XCTUnwrap(server.requests(to: "/files/x.jpg").first).header)
    }

    func testSameOriginRedirectsKeepCredentialsAndHeaders() throws {
        let tls = try TransportTLSServer()
        defer { tls.stop() }
        try tls.addFile("x.jpg", jpeg)
        // The target demands both the -u credentials and the -H header, so losing either fails the item.
        let url = tls.https("/redirect/2/auth/alice/s3cret-pw/require-header/X-Api-Key/k-secret-123/files/x.jpg")
        let run = try fetchBesideGoodURL([url + " out=x.jpg"], Self.secretOptions + ["--cacert", tls.certificateFile],
                                         alsoSaved: ["x.jpg"], exitCode: 0)
        assertSaved(run, url, attempts: 1)
        let hops = try tls.requests(to: "/redirect/")
        XCTAssertEqual(hops.count, 3)
        for hop in hops {
            XCTAssertTrue(hop.tls)
            assertCarriesSecrets(hop.header)
        }
    }

    func testURLUserinfoFollowsOnlySameOriginRedirects() throws {
        try serve("x.jpg")
        try serve("y.jpg")
        let authority = "bob:hunter2@127.0.0.1:\(server.port)"
        let same = "http://\(authority)/redirect/1/auth/bob/hunter2/files/x.jpg"
        let cross = "http://\(authority)/redirect-to?url=" + Self.percentEncoded("http://localhost:\(server.port)/files/y.jpg")
        let shown = { (url: String) in url.replacingOccurrences(of: "bob:hunter2@", with: "bob:***@") }
        let run = try fetchBesideGoodURL([same + " out=x.jpg", cross + " out=y.jpg"], alsoSaved: ["x.jpg", "y.jpg"], exitCode: 0)
        assertSaved(run, shown(same), attempts: 1)
        assertSaved(run, shown(cross), attempts: 1)
        let basic = "Basic " + Data("bob:hunter2".utf8).base64EncodedString()
        XCTAssertEqual(try server.requests(to: "/redirect/0/").first?.header("Authorization"), basic)
        XCTAssertEqual(try server.requests(to: "/redirect-to").first?.header("Authorization"), basic)
        XCTAssertNil(try XCTUnwrap(server.requests(to: "/files/y.jpg").first).header("Authorization"))
    }
}

// MARK: - Secrets for the credential cases

extension TransportFaultTests {
    /// `-u`, a custom header and a Cookie header: every kind of secret a run can be given.
    static let secretOptions = ["-u", "alice:s3cret-pw", "-H", "X-Api-Key: k-secret-123", "-H", "Cookie: session=c-secret-456"]

    static func percentEncoded(_ url: String) -> String {
        url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    func assertCarriesSecrets(_ header: (String) -> String?, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(header("Authorization"), "Basic " + Data("alice:s3cret-pw".utf8).base64EncodedString(), file: file, line: line)
        XCTAssertEqual(header("X-Api-Key"), "k-secret-123", file: file, line: line)
        XCTAssertEqual(header("Cookie"), "session=c-secret-456", file: file, line: line)
    }

    func assertCarriesNoSecrets(_ header: (String) -> String?, file: StaticString = #filePath, line: UInt = #line) {
        for name in ["Authorization", "X-Api-Key", "Cookie"] {
            XCTAssertNil(header(name), "\(name) followed a redirect off the origin", file: file, line: line)
        }
    }
}
