import Foundation
import XCTest

/// `--input-format jsonl`: each line a JSON object; members other than the URL and caption pass
/// through as the JSON they are.
final class TableInputJSONLinesTests: EndToEndTestCase {
    func testJSONLinesRowsAreFetchedAndTheirMembersPassThroughUnchanged() throws {
        _ = try addJPEG("a.jpg")
        let lines = [
            #"{"id": 7, "url": "\#(server.url("/files/a.jpg"))", "text": "a dog", "tags": ["x", 1], "score": 0.25}"#,
            "",
            #"{"id": 8, "text": "no url"}"#,
            #"{"url": 42}"#,
            "not json",
            #"{"url": "\#(server.url("/files/a.jpg"))", "text": null}"#,
        ]
        let list = try scratch.write("rows.jsonl", lines.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--input-format", "jsonl", "--caption-column", "text", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let results = try run.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(results.count, 5)
        let byLine = Dictionary(uniqueKeysWithValues: results.map { (($0["line"] as? [String: Any])?["line"] as? Int ?? 0, $0) })
        XCTAssertEqual(byLine[1]?["status"] as? String, "saved")
        XCTAssertEqual(byLine[1]?["caption"] as? String, "a dog")
        let columns = try XCTUnwrap(byLine[1]?["columns"] as? [String: Any])
        XCTAssertEqual(columns["id"] as? Int, 7)
        XCTAssertEqual(columns["score"] as? Double, 0.25)
        XCTAssertEqual((columns["tags"] as? [Any])?.count, 2)
        // The raw JSON text goes through, not a re-encoding.
        XCTAssertTrue(run.stdout.contains(#""columns":{"id":7,"tags":["x",1],"score":0.25}"#), run.stdout)
        XCTAssertEqual((byLine[3]?["error"] as? [String: Any])?["message"] as? String, "no 'url' member for the URL")
        XCTAssertEqual(byLine[3]?["caption"] as? String, "no url")
        XCTAssertEqual((byLine[4]?["error"] as? [String: Any])?["message"] as? String, "the 'url' member is not a string")
        XCTAssertEqual((byLine[5]?["error"] as? [String: Any])?["message"] as? String,
                       "invalid JSON line: not a JSON object")
        XCTAssertEqual(byLine[6]?["caption"] as? String, "", "a null caption is no caption, not the text 'null'")
    }
}
