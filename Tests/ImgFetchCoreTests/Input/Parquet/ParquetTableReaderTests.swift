import Foundation
import Glibc
@testable import ImgFetchCore
import XCTest

/// Rows of LAION-shaped files as pyarrow writes them, under every codec, encoding and page
/// version it offers: each row's URL, caption, typed columns and nulls, in order.
final class ParquetTableReaderTests: XCTestCase {
    private var paths: [String] = []

    override func tearDown() {
        for path in paths { unlink(path) }
        paths = []
    }

    private func rows(_ count: Int, _ options: [String], settings: TableSettings) throws -> [(line: Int, entry: ListEntry)] {
        let path = try ParquetFixture.write(rows: count, options + ["--url-base", "http://example.com/p"])
        paths.append(path)
        var reader = try ParquetTableReader(descriptor: open(path, O_RDONLY | O_CLOEXEC), settings: settings, listName: "t.parquet")
        defer { reader.close() }
        var rows: [(line: Int, entry: ListEntry)] = []
        while let row = reader.next() { rows.append(row) }
        return rows
    }

    private static var settings: TableSettings {
        var settings = TableSettings()
        settings.format = .parquet
        settings.captionColumn = "caption"
        return settings
    }

    /// The values make_parquet.py writes in row `i` (from 0).
    private func assertRow(_ row: (line: Int, entry: ListEntry), _ i: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(row.line, i + 1, file: file, line: line)
        guard case .item(let item) = row.entry, let table = item.row else {
            return XCTFail("row \(i): \(row.entry)", file: file, line: line)
        }
        XCTAssertEqual(item.url.normalized, "http://example.com/p/img\(i).jpg", file: file, line: line)
        XCTAssertEqual(table.caption, i % 7 == 3 ? nil : "a photo number \(i), \"quoted\"", file: file, line: line)
        guard let columns = try? JSONSerialization.jsonObject(with: Data(table.columnsJSON.utf8)) as? [String: Any] else {
            return XCTFail("row \(i): \(table.columnsJSON)", file: file, line: line)
        }
        if i % 11 == 5 {
            XCTAssertTrue(columns["similarity"] is NSNull, "row \(i): \(table.columnsJSON)", file: file, line: line)
        } else {
            XCTAssertEqual(columns["similarity"] as? Double ?? -1, 0.25 + Double(i % 100) / 1000, accuracy: 1e-6, file: file, line: line)
        }
        XCTAssertEqual(columns["width"] as? Int, 640 + i % 3, "a number stays a number", file: file, line: line)
        XCTAssertEqual(columns["height"] as? Int, 480, file: file, line: line)
        XCTAssertEqual(columns["punsafe"] as? Double ?? -1, Double(i % 13) / 100, accuracy: 1e-12, file: file, line: line)
        XCTAssertEqual(columns["key"] as? String, String(format: "%09d", i), "text stays text", file: file, line: line)
        XCTAssertTrue(table.columnsJSON.hasPrefix("{\"similarity\":"), table.columnsJSON, file: file, line: line)
        XCTAssertEqual(columns.count, 5, file: file, line: line)
    }

    func testEveryCodecEncodingAndPageVersion() throws {
        for codec in ["snappy", "zstd", "gzip", "none"] {
            for dictionary in [true, false] {
                for version in ["1.0", "2.0"] {
                    let options = ["--codec", codec, "--page-version", version, "--row-group-rows", "700"]
                        + (dictionary ? [] : ["--no-dictionary"])
                    let rows = try rows(2000, options, settings: Self.settings)
                    XCTAssertEqual(rows.count, 2000, "\(options)")
                    for (i, row) in rows.enumerated() where i % 97 == 0 || i >= 1995 { assertRow(row, i) }
                }
            }
        }
    }

    /// A long column spans many pages (pyarrow starts one every 1 MiB): rows stay aligned across them.
    func testColumnsStayAlignedAcrossPages() throws {
        let rows = try rows(60_000, ["--codec", "snappy", "--no-dictionary"], settings: Self.settings)
        XCTAssertEqual(rows.count, 60_000)
        for i in stride(from: 0, to: 60_000, by: 1237) { assertRow(rows[i], i) }
        assertRow(rows[59_999], 59_999)
    }

    func testAMissingOrNumericURLColumnIsAListError() throws {
        let path = try ParquetFixture.write(rows: 3)
        paths.append(path)
        var settings = Self.settings
        settings.urlColumn = "link"
        XCTAssertThrowsError(try ParquetTableReader(descriptor: open(path, O_RDONLY), settings: settings, listName: "t.parquet")) { error in
            XCTAssertEqual((error as? ListError)?.message, "list 't.parquet' has no column 'link' for the URLs; choose one with --url-column "
                           + "(its columns: 'url', 'caption', 'similarity', 'width', 'height', 'punsafe', 'key')")
        }
        settings.urlColumn = "width"
        XCTAssertThrowsError(try ParquetTableReader(descriptor: open(path, O_RDONLY), settings: settings, listName: "t.parquet")) { error in
            XCTAssertEqual((error as? ListError)?.message,
                           "list 't.parquet': column 'width' holds numbers, not URLs (choose another with --url-column)")
        }
    }

    /// Bytes damaged inside the pages: the rows before the damage, then one error entry; never a trap.
    func testDamagedPagesEndTheListWithAnError() throws {
        let path = try ParquetFixture.write(rows: 3000, ["--codec", "none", "--row-group-rows", "1000"])
        paths.append(path)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var random = SystemRandomNumberGenerator()
        var errors = 0
        for round in 0..<150 {
            var damaged = original
            // Between the leading PAR1 and the footer: the pages.
            for _ in 0..<(1 + round % 5) {
                damaged[Int.random(in: 4..<(original.count / 2), using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            let copy = path + ".damaged"
            try Data(damaged).write(to: URL(fileURLWithPath: copy))
            defer { unlink(copy) }
            guard var reader = try? ParquetTableReader(descriptor: open(copy, O_RDONLY), settings: Self.settings, listName: "d.parquet") else {
                continue
            }
            defer { reader.close() }
            var count = 0
            while let row = reader.next() {
                count += 1
                if case .unreadable(let reason) = row.entry {
                    XCTAssertTrue(reason.hasPrefix("cannot read the list: "), reason)
                    errors += 1
                }
                XCTAssertLessThanOrEqual(count, 3001)
            }
        }
        XCTAssertGreaterThan(errors, 0, "some damage must be found")
    }
}
