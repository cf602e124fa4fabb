import XCTest
@testable import ImgFetchCLI

/// Hostile names, URLs and messages on the gallery page: text never becomes markup, an attribute
/// value never ends early, and a link is only ever a relative path.
final class HTMLTextTests: XCTestCase {
    func testPlainTextPassesThroughUnchanged() {
        XCTAssertEqual(HTMLText.escape("cat-01.jpg"), "cat-01.jpg")
        XCTAssertEqual(HTMLText.escape("http://example.com/a/b.png?x=1"), "http://example.com/a/b.png?x=1")
        XCTAssertEqual(HTMLText.escape("Zürich – 東京 🐱.jpg"), "Zürich – 東京 🐱.jpg")
        XCTAssertEqual(HTMLText.escape(""), "")
    }

    func testMarkupCharactersBecomeReferences() {
        XCTAssertEqual(HTMLText.escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;")
        XCTAssertEqual(HTMLText.escape("a&b"), "a&amp;b")
        XCTAssertEqual(HTMLText.escape("&amp;"), "&amp;amp;", "an existing reference is escaped again, not trusted")
        XCTAssertEqual(HTMLText.escape("x\" onerror=\"alert(1)"), "x&quot; onerror=&quot;alert(1)")
        XCTAssertEqual(HTMLText.escape("it's"), "it&#39;s")
    }

    func testControlCharactersBecomeReplacementCharacters() {
        XCTAssertEqual(HTMLText.escape("a\u{0}b\tc\nd\re\u{1B}[31mf\u{7F}"), "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}[31mf\u{FFFD}")
        XCTAssertEqual(HTMLText.escape("\u{85}\u{9F}"), "\u{FFFD}\u{FFFD}", "C1 controls too")
        XCTAssertEqual(HTMLText.escape("\u{A0}©"), "\u{A0}©", "U+00A0 and up are text")
        XCTAssertEqual(HTMLText.escape("\r\n"), "\u{FFFD}\u{FFFD}", "CR LF is two scalars, both replaced")
    }

    func testEscapedTextHasNoMarkupLeft() {
        let hostile = "\"'><img src=x onerror=alert(1)><!--&#x3C;script>\u{0}"
        let escaped = HTMLText.escape(hostile)
        for forbidden in ["<", ">", "\"", "'", "\u{0}"] {
            XCTAssertFalse(escaped.contains(forbidden), "\(forbidden) survived in \(escaped)")
        }
    }

    func testHrefEncodesEverythingButUnreservedCharacters() {
        XCTAssertEqual(HTMLText.href(["pics", "cat.jpg"]), "pics/cat.jpg")
        XCTAssertEqual(HTMLText.href(["..", "..", "out", "a b.jpg"]), "../../out/a%20b.jpg")
        XCTAssertEqual(HTMLText.href(["100%.png"]), "100%25.png")
        XCTAssertEqual(HTMLText.href(["a?b#c.png"]), "a%3Fb%23c.png")
        XCTAssertEqual(HTMLText.href(["\"><script>.png"]), "%22%3E%3Cscript%3E.png")
        XCTAssertEqual(HTMLText.href(["é.png"]), "%C3%A9.png")
        XCTAssertEqual(HTMLText.href(["a~b_c-d.e"]), "a~b_c-d.e")
    }

    func testHrefCanNeverCarryAScheme() {
        // A file may be named after a scheme; as a link it must stay a relative path.
        XCTAssertEqual(HTMLText.href(["javascript:alert(1)"]), "javascript%3Aalert%281%29")
        XCTAssertEqual(HTMLText.href(["data:text"]), "data%3Atext")
        XCTAssertEqual(HTMLText.href(["file:", "etc"]), "file%3A/etc")
        XCTAssertEqual(HTMLText.href(["\\\\host\\share.png"]), "%5C%5Chost%5Cshare.png")
        for segment in ["javascript:x", "//evil.example/x", "a\u{0}b", "\u{FEFF}javascript:x", " x"] {
            let href = HTMLText.href([segment])
            XCTAssertFalse(href.contains(":"), href)
            XCTAssertTrue(href.utf8.allSatisfy { $0 < 0x80 && $0 > 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "'") }, href)
        }
        XCTAssertEqual(HTMLText.href(["//evil.example/x"]), "%2F%2Fevil.example%2Fx", "no protocol-relative URL")
    }
}
