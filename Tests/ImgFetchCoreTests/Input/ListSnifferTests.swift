import Foundation
import XCTest
@testable import ImgFetchCore

/// What a list's name and first line say about its format.
final class ListSnifferTests: XCTestCase {
    func testTheNameChoosesTheFormat() {
        let cases: [(String, InputFormat?)] = [
            ("photos.csv", .csv), ("dir.v2/PHOTOS.CSV", .csv), ("a.tsv", .tsv), ("rows.jsonl", .jsonl), ("rows.ndjson", .jsonl), ("laion-00000.parquet", .parquet),
            ("urls.txt", .txt), ("urls", .txt), (".csv", .txt), ("data.csv.gz", .txt), ("-", nil),
        ]
        for (name, format) in cases { XCTAssertEqual(ListSniffer.format(ofListNamed: name), format, name) }
    }

    func testAFirstLineThatLooksLikeATable() {
        let cases: [(String, InputFormat?)] = [
            ("url,caption", .csv), ("url\tcaption", .tsv), (#"{"url": "https://a/b.jpg"}"#, .jsonl),
            ("https://a/b.jpg", nil), ("HTTP://a/b,c.jpg", nil), ("https://a/b.jpg out=x.jpg", nil), ("not a url", nil),
        ]
        for (line, format) in cases { XCTAssertEqual(ListSniffer.tableLook(ofFirstLine: line), format, line) }
    }

    func testTheFirstLineSkipsCommentsAndBlanksAndLeavesTheOffsetAlone() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sniff-\(UUID().uuidString).txt").path
        defer { unlink(path) }
        try "\u{FEFF}# a comment\n\n   \nurl,caption\r\nhttps://a/b.jpg,x\n".write(toFile: path, atomically: true, encoding: .utf8)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        XCTAssertEqual(ListSniffer.firstLine(of: descriptor), "url,caption")
        XCTAssertEqual(lseek(descriptor, 0, SEEK_CUR), 0)
        XCTAssertNil(ListSniffer.firstLine(of: -1), "not a file")
    }
}
