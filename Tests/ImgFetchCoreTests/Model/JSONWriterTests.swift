import XCTest
@testable import ImgFetchCore

final class JSONWriterTests: XCTestCase {
    func testMembersKeepTheirOrderAndNilIsNull() {
        var json = JSONWriter()
        json.add("b", "text")
        json.add("a", 7 as Int?)
        json.add("none", nil as String?)
        json.add("flag", true)
        json.add("seconds", 0.25)
        json.add("paths", ["x", "y"])
        json.add("raw", json: "[1,{\"k\":null}]")
        json.add("nested") { $0.add("inner", false) }
        XCTAssertEqual(json.line,
                       #"{"b":"text","a":7,"none":null,"flag":true,"seconds":0.25,"paths":["x","y"],"raw":[1,{"k":null}],"nested":{"inner":false}}"# + "\n")
    }

    func testStringsAndKeysAreEscapedAsRFC8259Says() {
        var json = JSONWriter()
        json.add("quote\"key", "a\"b\\c\nd\re\tf\u{01}g\u{1F}é😀")
        XCTAssertEqual(json.object, #"{"quote\"key":"a\"b\\c\nd\re\tf\u0001g\u001fé😀"}"#)
        let decoded = try? JSONSerialization.jsonObject(with: Data(json.object.utf8)) as? [String: String]
        XCTAssertEqual(decoded?["quote\"key"], "a\"b\\c\nd\re\tf\u{01}g\u{1F}é😀")
    }

    func testAnEmptyObjectAndANonFiniteNumber() {
        XCTAssertEqual(JSONWriter().object, "{}")
        var json = JSONWriter()
        json.add("nan", Double.nan)
        XCTAssertEqual(json.object, #"{"nan":null}"#)
    }

    func testAnObjectReadBackGoesOnWhereItStopped() {
        var json = JSONWriter(continuing: #"{"shard":"000000""#)
        json.add("etag", "abc")
        XCTAssertEqual(json.line, #"{"shard":"000000","etag":"abc"}"# + "\n")
        var empty = JSONWriter(continuing: "{")
        empty.add("a", 1 as Int?)
        XCTAssertEqual(empty.object, #"{"a":1}"#)
    }
}
