import XCTest
@testable import ImgFetchCore

final class JSONObjectScannerTests: XCTestCase {
    private func members(_ text: String) throws -> [String] {
        try JSONObjectScanner.members(of: Array(text.utf8)).map { "\($0.key)=\($0.value)" }
    }

    func testValuesAreKeptAsWrittenBetweenTheirTokens() throws {
        XCTAssertEqual(try members(#" {"url": "http://a/x.jpg", "n": -1.5e3, "tags": ["a", {"b": null}], "ok": true, "e": {}} "#),
                       [#"url="http://a/x.jpg""#, "n=-1.5e3", #"tags=["a",{"b":null}]"#, "ok=true", "e={}"])
        XCTAssertEqual(try members("{}"), [])
    }

    func testWhitespaceBetweenTokensIsDroppedButNotInsideStrings() throws {
        XCTAssertEqual(try members("{\"t\": [1,\r\n 2, {\"a b\" :\t\"c \\\" d\"}]}"), [#"t=[1,2,{"a b":"c \" d"}]"#])
    }

    func testKeysAndStringsAreDecoded() throws {
        let parsed = try JSONObjectScanner.members(of: Array(#"{"caf\u00e9": "a\"b\\c\n\ud83d\ude00"}"#.utf8))
        XCTAssertEqual(parsed.first?.key, "café")
        XCTAssertEqual(JSONObjectScanner.string(parsed[0].value), "a\"b\\c\n😀")
        XCTAssertNil(JSONObjectScanner.string("12"))
        XCTAssertEqual(JSONObjectScanner.string(#""\ud800""#), "\u{FFFD}", "a lone surrogate")
    }

    func testMalformedObjectsAreRefusedWithAReason() {
        let cases = [
            "[1, 2]": "not a JSON object",
            #"{"a": 1"#: "the JSON ends too early",
            #"{"a": 1,}"#: "unexpected '}' at offset 8 of the JSON",
            #"{"a": 01}"#: "unexpected '1' at offset 7 of the JSON",
            #"{"a": tru}"#: "unexpected '}' at offset 9 of the JSON",
            #"{"a": "x"} {"#: "text after the JSON object",
            "{\"a\": \"x\ny\"}": "a control character inside a JSON string at offset 8",
            #"{"a": "open}"#: "a JSON string is not closed",
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try members(text), text) { error in
                XCTAssertEqual((error as? JSONObjectScanner.Failure)?.reason, reason, text)
            }
        }
    }

    func testDeepNestingIsRefusedNotFollowed() {
        let deep = "{\"a\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        XCTAssertThrowsError(try members(deep)) { error in
            XCTAssertEqual((error as? JSONObjectScanner.Failure)?.reason, "JSON nested deeper than 64 levels")
        }
    }
}
