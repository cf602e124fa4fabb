import Foundation
import XCTest

/// `--input-format csv|tsv`: tables in, with their columns in each item's JSON result.
final class TableInputTests: EndToEndTestCase {
    private func jsonLines(_ execution: Execution) throws -> [[String: Any]] {
        try execution.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func testACSVWithCaptionsAndOtherColumnsIsFetchedAndPassedThrough() throws {
        _ = try addJPEG("a.jpg")
        let csv = "id,url,caption,license\r\n"
            + "7,\(server.url("/files/a.jpg")),\"a cat, \"\"Tom\"\"\",cc-by\r\n"
            + "8,,\"no URL here\",cc0\r\n"
            + "9,\(server.url("/files/a.jpg"))?again,\"two\nlines\",cc-by-sa\r\n"
        let list = try scratch.write("list.csv", csv)
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--input-format", "csv", "--caption-column", "caption", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let lines = try jsonLines(run)
        XCTAssertEqual(lines.count, 3)
        let byLine = Dictionary(uniqueKeysWithValues: lines.map { (($0["line"] as? [String: Any])?["line"] as? Int ?? 0, $0) })
        XCTAssertEqual(byLine[2]?["status"] as? String, "saved")
        XCTAssertEqual(byLine[2]?["caption"] as? String, "a cat, \"Tom\"")
        XCTAssertEqual(byLine[2]?["columns"] as? [String: String], ["id": "7", "license": "cc-by"])
        XCTAssertEqual(byLine[3]?["status"] as? String, "failed")
        XCTAssertEqual((byLine[3]?["error"] as? [String: Any])?["message"] as? String, "empty URL in column 'url'")
        XCTAssertEqual(byLine[3]?["columns"] as? [String: String], ["id": "8", "license": "cc0"], "a failed row keeps its columns")
        XCTAssertEqual(byLine[4]?["caption"] as? String, "two\nlines")
        XCTAssertTrue(run.stderr.contains("list.csv:3: empty URL in column 'url'"), run.stderr)
        XCTAssertEqual(try server.requests(to: "/files/").count, 2)
    }

    func testAListsNameChoosesItsFormatAndATableNamedLikeAListIsStoppedWithAHint() throws {
        _ = try addJPEG("a.jpg")
        let url = server.url("/files/a.jpg")
        // photos.csv with no --input-format: a CSV table, its caption passed through.
        let csv = try scratch.write("photos.csv", "url,caption\n\(url),a cat\n")
        let byName = try ImgFetchRunner.run([csv, "-o", outputDirectory, "--caption-column", "caption", "--jsonl"])
        XCTAssertEqual(byName.exitCode, 0, byName.stderr)
        XCTAssertEqual(try jsonLines(byName).first?["caption"] as? String, "a cat")
        // .ndjson reads as JSON Lines.
        let ndjson = try scratch.write("rows.ndjson", "{\"url\": \"\(url)?2\"}\n")
        XCTAssertEqual(try ImgFetchRunner.run([ndjson, "-o", outputDirectory]).exitCode, 0)

        // The same table named .txt: exit 2 before any request, with what to do.
        let before = try server.requests(to: "/files/").count
        let misnamed = try scratch.write("photos.txt", "# exported\n\nurl,caption\n\(url)?3,a cat\n")
        let stopped = try ImgFetchRunner.run([misnamed, "-o", outputDirectory])
        XCTAssertEqual(stopped.exitCode, 2, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("photos.txt looks like a CSV table, not a list of URLs (its first line is 'url,caption')")
            && stopped.stderr.contains("--input-format csv"), stopped.stderr)
        let json = try scratch.write("rows.txt", "{\"url\": \"\(url)?4\"}\n")
        XCTAssertTrue(try ImgFetchRunner.run([json, "-o", outputDirectory]).stderr.contains("looks like JSON Lines"))
        XCTAssertEqual(try server.requests(to: "/files/").count, before, "no request was made")

        // --input-format still decides; lists of two formats need it.
        let plain = try scratch.write("plain.txt", "url,caption\n\(url)?3,a cat\n")
        let explicit = try ImgFetchRunner.run([plain, "-o", outputDirectory, "--input-format", "csv"])
        XCTAssertEqual(explicit.exitCode, 0, explicit.stderr)
        let mixed = try ImgFetchRunner.run([csv, misnamed, "-o", outputDirectory])
        XCTAssertEqual(mixed.exitCode, 2)
        XCTAssertTrue(mixed.stderr.contains("'--input-format' is needed for lists whose names say different formats"), mixed.stderr)
    }

    func testATSVWithAnotherURLColumn() throws {
        _ = try addJPEG("a.jpg")
        let list = try scratch.write("list.tsv", "link\tnote\n\(server.url("/files/a.jpg"))\tfirst\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--input-format", "tsv", "--url-column", "link", "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let line = try XCTUnwrap(try jsonLines(run).first)
        XCTAssertEqual(line["columns"] as? [String: String], ["note": "first"])
        XCTAssertTrue(line["caption"] is NSNull)
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
    }

    func testAMissingURLColumnIsAUsageErrorBeforeAnyRequest() throws {
        let list = try scratch.write("list.csv", "id,link\n1,\(server.url("/files/a.jpg"))\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--input-format", "csv"])
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("has no column 'url' for the URLs (its columns: 'id', 'link'; choose one with --url-column)"),
                      run.stderr)
        XCTAssertEqual(try server.requests().count, 0)
    }

    func testAHugeRowOrABrokenQuoteFailsThatRowAndTheRunGoesOn() throws {
        _ = try addJPEG("a.jpg")
        let huge = String(repeating: "x", count: 10 << 20)
        let csv = "url,caption\n\(server.url("/files/a.jpg"))?1,\(huge)\n\(server.url("/files/a.jpg"))?2,\"ok\"x\n"
            + "\(server.url("/files/a.jpg"))?3,fine\n"
        let list = try scratch.write("list.csv", csv)
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--input-format", "csv", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1)
        let lines = try jsonLines(run)
        XCTAssertEqual(lines.count, 3)
        let messages = lines.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
        XCTAssertTrue(messages.contains { $0.hasPrefix("record longer than 1 MiB") }, "\(messages)")
        XCTAssertTrue(messages.contains("a character follows a closing quote"), "\(messages)")
        XCTAssertEqual(lines.filter { ($0["status"] as? String) == "saved" }.count, 1)
    }
}
