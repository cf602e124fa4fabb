import XCTest
@testable import ImgFetchCore

final class ParsedURLTests: XCTestCase {
    // MARK: - Normalization

    func testSchemeAndHostAreLowercasedButPathKeepsItsCase() throws {
        let url = try ParsedURL("HTTP://Example.COM/Photos/Cat.JPG")
        XCTAssertEqual(url.normalized, "http://example.com/Photos/Cat.JPG")
        XCTAssertEqual(url.scheme, "http")
        XCTAssertEqual(url.host, "example.com")
    }

    func testDefaultHTTPPortIsDropped() throws {
        let url = try ParsedURL("http://example.com:80/a.jpg")
        XCTAssertEqual(url.normalized, "http://example.com/a.jpg")
        XCTAssertEqual(url.port, 80)
    }

    func testDefaultHTTPSPortIsDropped() throws {
        let url = try ParsedURL("https://example.com:443/a.jpg")
        XCTAssertEqual(url.normalized, "https://example.com/a.jpg")
        XCTAssertEqual(url.port, 443)
    }

    func testPortDefaultsToTheSchemesPortWhenNotGiven() throws {
        XCTAssertEqual(try ParsedURL("http://example.com/a.jpg").port, 80)
        XCTAssertEqual(try ParsedURL("https://example.com/a.jpg").port, 443)
    }

    func testExplicitNonDefaultPortIsKept() throws {
        let url = try ParsedURL("http://example.com:8080/a.jpg")
        XCTAssertEqual(url.normalized, "http://example.com:8080/a.jpg")
        XCTAssertEqual(url.port, 8080)
    }

    func testPort80IsNotDefaultForHTTPS() throws {
        let url = try ParsedURL("https://example.com:80/a.jpg")
        XCTAssertEqual(url.normalized, "https://example.com:80/a.jpg")
        XCTAssertEqual(url.port, 80)
    }

    func testFragmentIsDroppedAndQueryKept() throws {
        let url = try ParsedURL("https://example.com/a.jpg?size=large&v=2#section")
        XCTAssertEqual(url.normalized, "https://example.com/a.jpg?size=large&v=2")
    }

    func testEquivalentSpellingsNormalizeToTheSameURL() throws {
        let a = try ParsedURL("HTTPS://EXAMPLE.com:443/x.png#top")
        let b = try ParsedURL("https://example.com/x.png")
        XCTAssertEqual(a.normalized, b.normalized)
        XCTAssertEqual(a, b)
    }

    // MARK: - lastPathSegment

    func testLastPathSegmentIsPercentDecoded() throws {
        XCTAssertEqual(try ParsedURL("http://example.com/a/my%20cat%2Bdog.jpg").lastPathSegment, "my cat+dog.jpg")
    }

    func testLastPathSegmentIgnoresTheQuery() throws {
        XCTAssertEqual(try ParsedURL("http://example.com/a/b.jpg?x=1").lastPathSegment, "b.jpg")
    }

    func testLastPathSegmentIsEmptyForTrailingSlash() throws {
        XCTAssertEqual(try ParsedURL("http://example.com/photos/").lastPathSegment, "")
    }

    func testLastPathSegmentIsEmptyForRootPath() throws {
        XCTAssertEqual(try ParsedURL("http://example.com").lastPathSegment, "")
        XCTAssertEqual(try ParsedURL("http://example.com/").lastPathSegment, "")
    }

    func testLastPathSegmentDecodesUTF8() throws {
        XCTAssertEqual(try ParsedURL("http://example.com/caf%C3%A9.png").lastPathSegment, "café.png")
    }

    // MARK: - origin

    func testOriginIncludesTheDefaultPort() throws {
        XCTAssertEqual(try ParsedURL("https://Example.com/a/b.jpg?q=1").origin, "https://example.com:443")
        XCTAssertEqual(try ParsedURL("http://example.com/").origin, "http://example.com:80")
    }

    func testOriginIncludesAnExplicitPort() throws {
        XCTAssertEqual(try ParsedURL("http://127.0.0.1:8123/x").origin, "http://127.0.0.1:8123")
    }

    func testOriginsDifferBySchemeAndPort() throws {
        let http = try ParsedURL("http://example.com/a")
        let https = try ParsedURL("https://example.com/a")
        let other = try ParsedURL("http://example.com:8080/a")
        XCTAssertNotEqual(http.origin, https.origin)
        XCTAssertNotEqual(http.origin, other.origin)
    }

    // MARK: - Redaction

    func testPasswordIsRedactedAndUserKept() throws {
        let url = try ParsedURL("https://alice:s3cret@example.com/private/a.jpg")
        XCTAssertEqual(url.redacted, "https://alice:***@example.com/private/a.jpg")
        XCTAssertFalse(url.redacted.contains("s3cret"))
        XCTAssertFalse(url.description.contains("s3cret"))
    }

    func testNormalizedKeepsCredentialsForFetching() throws {
        let url = try ParsedURL("https://alice:s3cret@example.com/a.jpg")
        XCTAssertEqual(url.normalized, "https://alice:s3cret@example.com/a.jpg")
    }

    func testWithoutUserinfoRedactedEqualsNormalized() throws {
        let url = try ParsedURL("https://example.com:8443/a.jpg?x=1#f")
        XCTAssertEqual(url.redacted, url.normalized)
        XCTAssertEqual(url.description, url.normalized)
    }

    func testUserWithoutPasswordIsNotRedacted() throws {
        let url = try ParsedURL("https://alice@example.com/a.jpg")
        XCTAssertEqual(url.redacted, url.normalized)
        XCTAssertTrue(url.redacted.contains("alice@"))
    }

    // MARK: - Rejection

    func testFTPSchemeIsUnsupported() {
        XCTAssertThrowsError(try ParsedURL("ftp://example.com/a.jpg")) { error in
            XCTAssertEqual(error as? URLParseError, .unsupportedScheme("ftp"))
        }
    }

    func testFileSchemeIsUnsupported() {
        XCTAssertThrowsError(try ParsedURL("file:///etc/passwd")) { error in
            guard case .unsupportedScheme(let scheme)? = error as? URLParseError else {
                return XCTFail("expected .unsupportedScheme, got \(error)")
            }
            XCTAssertEqual(scheme, "file")
        }
    }

    func testUnsupportedSchemeIsReportedLowercased() {
        XCTAssertThrowsError(try ParsedURL("FTP://example.com/a.jpg")) { error in
            XCTAssertEqual(error as? URLParseError, .unsupportedScheme("ftp"))
        }
    }

    func testGarbageIsInvalid() {
        assertInvalid("not a url at all")
        assertInvalid("")
        assertInvalid("http://")
    }

    func testEmptyHostIsInvalid() {
        assertInvalid("https://:8080/a.jpg")
        assertInvalid("http://:80/")
        assertInvalid("http://user@/a.jpg")
    }

    func testExtraSlashesBeforeTheHostAreSkippedAsBrowsersDo() throws {
        // libcurl, like the WHATWG URL parser, reads "http:///a.jpg" as host "a.jpg", not an empty host.
        XCTAssertEqual(try ParsedURL("http:///a.jpg").host, "a.jpg")
    }

    func testOverLongURLIsRejected() {
        let prefix = "http://example.com/"
        let url = prefix + String(repeating: "a", count: ParsedURL.maxLength + 1 - prefix.utf8.count)
        XCTAssertEqual(url.utf8.count, 8193)
        XCTAssertThrowsError(try ParsedURL(url)) { error in
            XCTAssertEqual(error as? URLParseError, .tooLong)
        }
    }

    func testURLOfExactlyMaxLengthIsAccepted() throws {
        let prefix = "http://example.com/"
        let url = prefix + String(repeating: "a", count: ParsedURL.maxLength - prefix.utf8.count)
        XCTAssertEqual(url.utf8.count, 8192)
        XCTAssertEqual(try ParsedURL(url).normalized, url)
    }

    func testLengthLimitCountsUTF8Bytes() {
        // 4,097 two-byte characters: 4,097 characters but 8,194 bytes.
        let url = "http://example.com/" + String(repeating: "é", count: 4097)
        XCTAssertThrowsError(try ParsedURL(url)) { error in
            XCTAssertEqual(error as? URLParseError, .tooLong)
        }
    }

    func testErrorDescriptionsAreReadable() {
        XCTAssertEqual(URLParseError.tooLong.description, "URL longer than 8192 bytes")
        XCTAssertEqual(URLParseError.unsupportedScheme("ftp").description, "unsupported scheme 'ftp' (only http and https)")
        XCTAssertTrue(URLParseError.invalid("x").description.hasPrefix("not a valid URL"))
    }

    private func assertInvalid(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ParsedURL(text), "'\(text)' was accepted", file: file, line: line) { error in
            guard case .invalid? = error as? URLParseError else {
                return XCTFail("'\(text)': expected .invalid, got \(error)", file: file, line: line)
            }
        }
    }

    /// A host and path without `http://` (libcurl would take `127.0.0.1` for a scheme) says what is missing.
    func testAURLWithoutItsSchemeSaysToAddIt() {
        for text in ["127.0.0.1:18080/x.jpg", "example.com/cat.jpg", "localhost:8080"] {
            XCTAssertThrowsError(try ParsedURL(text), text) { error in
                XCTAssertEqual(error as? URLParseError, .missingScheme, text)
            }
        }
        XCTAssertEqual(URLParseError.missingScheme.description, "not a valid URL: no scheme; add http:// or https:// in front")
        XCTAssertEqual(try? ParsedURL("HTTP://example.com/a.jpg").normalized, "http://example.com/a.jpg")
        // URLs of other schemes keep libcurl's own error, not the hint.
        for text in ["data:image/png;base64,iVBORw0KGgo=", "mailto:someone@example.com"] {
            XCTAssertThrowsError(try ParsedURL(text)) { error in
                XCTAssertNotEqual(error as? URLParseError, .missingScheme, text)
            }
        }
        for name in ["urls.txt", "photo.jpg", "./list.txt", "lists/a.txt", "not a url/at all", "data:image/png", "about:blank"] {
            XCTAssertFalse(ParsedURL.isMissingItsScheme(name), name)
        }
    }

}
