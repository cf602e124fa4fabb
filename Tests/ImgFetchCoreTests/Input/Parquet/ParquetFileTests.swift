import Foundation
import Glibc
@testable import ImgFetchCore
import XCTest

/// The footer of files pyarrow writes, as LAION's parts are written; and files that are not
/// Parquet, cut short or damaged, which fail with what is wrong and never trap.
final class ParquetFileTests: XCTestCase {
    private var paths: [String] = []

    override func tearDown() {
        for path in paths { unlink(path) }
        paths = []
    }

    private func fixture(rows: Int, _ options: [String] = []) throws -> String {
        let path = try ParquetFixture.write(rows: rows, options)
        paths.append(path)
        return path
    }

    private func open(_ path: String) throws(ParquetError) -> ParquetFile {
        try ParquetFile(descriptor: Glibc.open(path, O_RDONLY | O_CLOEXEC))
    }

    func testTheFooterOfALAIONShapedFile() throws {
        let file = try open(try fixture(rows: 1000, ["--row-group-rows", "400"]))
        defer { file.close() }
        let metadata = file.metadata
        XCTAssertEqual(metadata.rowCount, 1000)
        XCTAssertEqual(metadata.rowGroups.map(\.rowCount), [400, 400, 200])
        XCTAssertEqual(metadata.columns.map(\.name), ["url", "caption", "similarity", "width", "height", "punsafe", "key"])
        // BYTE_ARRAY 6, FLOAT 4, INT64 2, DOUBLE 5; pyarrow writes every column as OPTIONAL.
        XCTAssertEqual(metadata.columns.map(\.type), [6, 6, 4, 2, 2, 5, 6])
        XCTAssertEqual(metadata.columns.map(\.isText), [true, true, false, false, false, false, true])
        XCTAssertTrue(metadata.columns.allSatisfy(\.isOptional))
        let url = metadata.rowGroups[0].columns[0]
        XCTAssertEqual(url.path, ["url"])
        XCTAssertEqual(url.codec, 1, "Snappy")
        XCTAssertEqual(url.valueCount, 400)
        XCTAssertNotNil(url.dictionaryPageOffset)
        XCTAssertEqual(url.start, url.dictionaryPageOffset)
        for group in metadata.rowGroups {
            for chunk in group.columns {
                XCTAssertGreaterThan(chunk.start, 3)
                XCTAssertLessThanOrEqual(chunk.start + chunk.compressedSize, file.size - 8)
            }
        }
    }

    func testEachCodecIsNamedInTheChunks() throws {
        for (codec, number) in [("zstd", Int32(6)), ("gzip", 2), ("none", 0)] {
            let file = try open(try fixture(rows: 10, ["--codec", codec, "--no-dictionary"]))
            defer { file.close() }
            XCTAssertEqual(Set(file.metadata.rowGroups.flatMap(\.columns).map(\.codec)), [number], codec)
            XCTAssertNil(file.metadata.rowGroups[0].columns[0].dictionaryPageOffset, codec)
        }
    }

    func testWhatIsNotParquetOrIsCutShortSaysSo() throws {
        let text = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-\(UUID().uuidString).parquet").path
        paths.append(text)
        try "url\nhttp://example.com/a.jpg\n".write(toFile: text, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try open(text)) { error in
            XCTAssertEqual((error as? ParquetError)?.description, "not a Parquet file: no PAR1 at its start")
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: try fixture(rows: 100)))
        let cut = text + ".cut"
        paths.append(cut)
        try whole.prefix(whole.count - 100).write(to: URL(fileURLWithPath: cut))
        XCTAssertThrowsError(try open(cut)) { error in
            XCTAssertEqual((error as? ParquetError)?.description, "truncated Parquet: the file ends inside its footer (no PAR1 at its end)")
        }
    }

    /// Every cut of the footer, and bytes flipped all over it: an error or a parse, never a trap.
    func testADamagedFooterFailsCleanly() throws {
        let path = try fixture(rows: 50, ["--row-group-rows", "20"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let length = Int(bytes[bytes.count - 8]) | Int(bytes[bytes.count - 7]) << 8 | Int(bytes[bytes.count - 6]) << 16
        let footer = Array(bytes[(bytes.count - 8 - length)..<(bytes.count - 8)])
        XCTAssertNoThrow(try ParquetMetadata(footer: footer))
        for end in 0..<footer.count {
            XCTAssertThrowsError(try ParquetMetadata(footer: Array(footer.prefix(end))), "cut at \(end)")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var damaged = footer
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = try? ParquetMetadata(footer: damaged)
        }
    }
}
