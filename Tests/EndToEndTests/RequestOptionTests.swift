import Foundation
import XCTest

/// What each request carries: credentials, headers, user agent, cookies.
final class RequestOptionTests: EndToEndTestCase {
    func testCredentialsAndHeadersArrive() throws {
        _ = try addJPEG("secret.jpg")
        let url = server.url("/auth/alice/s3cret/require-header/X-Api-Key/k-123/files/secret.jpg")
        let result = try fetch([url], ["-u", "alice:s3cret", "-H", "X-Api-Key: k-123", "-A", "tester/1.0"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let request = try XCTUnwrap(server.requests(to: "/auth/").first)
        XCTAssertEqual(request.header("Authorization"), "Basic " + Data("alice:s3cret".utf8).base64EncodedString())
        XCTAssertEqual(request.header("X-Api-Key"), "k-123")
        XCTAssertEqual(request.header("User-Agent"), "tester/1.0")
    }

    func testWrongCredentialsFailWith401() throws {
        let url = server.url("/auth/alice/s3cret/files/secret.jpg")
        let result = try fetch([url], ["-u", "alice:wrong"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(result.result(for: url)?[2], "HTTP 401")
    }

    func testDefaultUserAgent() throws {
        _ = try addJPEG("a.jpg")
        _ = try fetch([server.url("/files/a.jpg")])
        XCTAssertTrue(try server.requests(to: "/files/").first?.header("User-Agent")?.hasPrefix("imgfetch/") ?? false)
    }

    func testHTTP2OffersAnH2cUpgradeOnPlainHTTPAndFallsBackToHTTP11() throws {
        _ = try addJPEG("a.jpg")
        _ = try addJPEG("b.jpg")
        let plain = try fetch([server.url("/files/a.jpg")])
        XCTAssertEqual(plain.exitCode, 0, plain.stderr)
        XCTAssertNil(try server.requests(to: "/files/a.jpg").first?.header("Upgrade"))
        // This server does not speak h2c: it answers over HTTP/1.1, and the item is saved as usual.
        let offered = try fetch([server.url("/files/b.jpg")], ["--http2", "--jsonl"])
        XCTAssertEqual(offered.exitCode, 0, offered.stderr)
        XCTAssertTrue(offered.stdout.contains("\"http_version\":\"1.1\""), offered.stdout)
        XCTAssertEqual(try server.requests(to: "/files/b.jpg").first?.header("Upgrade"), "h2c")
    }

    func testCredentialsAndHeadersStayOnTheirOrigin() throws {
        let other = try TestServer()
        defer { other.stop() }
        let data = try other.addFile("x.jpg", try addJPEG("x.jpg"))
        let target = other.url("/files/x.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let sameOrigin = server.url("/redirect/1/files/x.jpg")
        let crossOrigin = server.url("/redirect-to?url=\(target)")
        let result = try fetch([sameOrigin, crossOrigin + " out=cross.jpg"],
                               ["-u", "alice:s3cret", "-H", "X-Api-Key: k-123", "-H", "Cookie: session=1"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputData("cross.jpg"), data)

        // Same origin after the redirect: everything still sent.
        let sameHop = try XCTUnwrap(server.requests(to: "/redirect/0/").first)
        XCTAssertNotNil(sameHop.header("Authorization"))
        XCTAssertEqual(sameHop.header("X-Api-Key"), "k-123")
        // Another port is another origin: nothing of -u or -H goes there.
        let crossHop = try XCTUnwrap(other.requests(to: "/files/x.jpg").first)
        XCTAssertNil(crossHop.header("Authorization"))
        XCTAssertNil(crossHop.header("X-Api-Key"))
        XCTAssertNil(crossHop.header("Cookie"))
    }

    func testCookiesRoundTripThroughTheJar() throws {
        _ = try addJPEG("a.jpg")
        let jar = scratch.file("cookies.txt").path
        let first = try fetch([server.url("/set-cookie/session/abc123/files/a.jpg")], ["--cookie-jar", jar])
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        let saved = try String(contentsOfFile: jar, encoding: .utf8)
        XCTAssertTrue(saved.contains("session\tabc123"), saved)

        let url = server.url("/require-cookie/session/abc123/files/a.jpg")
        let second = try fetch([url + " out=b.jpg"], ["--cookie-jar", jar])
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(try server.requests(to: "/require-cookie/").first?.header("Cookie"), "session=abc123")
    }

    func testNoCookiesWithoutAJar() throws {
        _ = try addJPEG("a.jpg")
        let list = [server.url("/set-cookie/session/abc123/files/a.jpg"),
                    server.url("/delay/0.5/files/a.jpg") + " out=b.jpg"]
        let result = try fetch(list, ["-j", "1"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertNil(try server.requests(to: "/delay/").first?.header("Cookie"))
    }

    func testPasswordInListURLIsRedacted() throws {
        _ = try addJPEG("a.jpg")
        let url = "http://bob:hunter2@127.0.0.1:\(server.port)/files/a.jpg"
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertFalse(result.stdout.contains("hunter2"), result.stdout)
        XCTAssertTrue(result.stdout.contains("bob:***@"), result.stdout)
        XCTAssertEqual(try server.requests(to: "/files/").first?.header("Authorization"),
                       "Basic " + Data("bob:hunter2".utf8).base64EncodedString())
    }
}
