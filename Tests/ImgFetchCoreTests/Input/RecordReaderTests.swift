import Glibc
import XCTest
@testable import ImgFetchCore

/// `RecordReader` and `TableReader` over real files: RFC 4180 CSV, TSV, and the rows that go wrong.
final class RecordReaderTests: XCTestCase {
    private var paths: [String] = []

    override func tearDown() {
        for path in paths { unlink(path) }
    }

    /// A file holding `bytes`, opened for reading.
    private func descriptor(_ bytes: [UInt8]) -> Int32 {
        var template = Array("/tmp/imgfetch-records-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        paths.append(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    private func records(_ text: String, _ dialect: RecordReader.Dialect = .csv) -> [RecordReader.Record] {
        records(Array(text.utf8), dialect)
    }

    private func records(_ bytes: [UInt8], _ dialect: RecordReader.Dialect = .csv) -> [RecordReader.Record] {
        let fd = descriptor(bytes)
        defer { close(fd) }
        var reader = RecordReader(descriptor: fd, dialect: dialect)
        var all: [RecordReader.Record] = []
        while let record = reader.next(), all.count < 100_000 { all.append(record) }
        return all
    }

    func testQuotedFieldsHoldCommasQuotesAndLineBreaks() {
        XCTAssertEqual(records("url,caption\r\nhttp://a/1.jpg,\"a cat, \"\"Tom\"\"\"\r\nhttp://a/2.jpg,\"two\nlines\"\nhttp://a/3.jpg,plain"), [
            .fields(["url", "caption"], line: 1),
            .fields(["http://a/1.jpg", "a cat, \"Tom\""], line: 2),
            .fields(["http://a/2.jpg", "two\nlines"], line: 3),
            .fields(["http://a/3.jpg", "plain"], line: 5),
        ])
    }

    func testEmptyFieldsAByteOrderMarkAndCRInsideQuotes() {
        XCTAssertEqual(records([0xEF, 0xBB, 0xBF] + Array("a,,\"\"\n\"x\r\ny\",b\r\n".utf8)), [
            .fields(["a", "", ""], line: 1),
            .fields(["x\r\ny", "b"], line: 2),
        ])
    }

    func testAnUnclosedQuoteAndAStrayCharacterAreReported() {
        XCTAssertEqual(records("ok,1\n\"x\"y,2\nnext,3\n\"never closed,4\nmore\n"), [
            .fields(["ok", "1"], line: 1),
            .invalid(reason: "a character follows a closing quote", line: 2),
            .fields(["next", "3"], line: 3),
            .invalid(reason: "a quoted field opened on this line is not closed before the end of the list", line: 4),
        ])
    }

    func testAnOverlongRecordIsReportedAndReadingGoesOnAtTheNextLine() {
        let long = String(repeating: "x", count: RecordReader.maxRecordBytes + 10)
        let result = records("a,b\n\(long),y\nc,d\n")
        XCTAssertEqual(result.count, 3)
        XCTAssertEqual(result[0], .fields(["a", "b"], line: 1))
        guard case .invalid(let reason, let line) = result[1] else { return XCTFail("\(result[1])") }
        XCTAssertEqual(line, 2)
        XCTAssertTrue(reason.hasPrefix("record longer than 1 MiB"), reason)
        XCTAssertEqual(result[2], .fields(["c", "d"], line: 3))
    }

    func testALongQuotedFieldWithLineBreaksIsOneBadRecordNotMany() {
        let long = String(repeating: "a caption line that goes on\n", count: (RecordReader.maxRecordBytes / 28) + 100)
        let result = records("url,caption\nhttp://a/1.jpg,\"\(long)\"\nhttp://a/2.jpg,ok\n")
        XCTAssertEqual(result.count, 3, "\(result.prefix(4))")
        XCTAssertEqual(result.first, .fields(["url", "caption"], line: 1))
        XCTAssertEqual(result.dropFirst().first, .invalid(reason: "record longer than 1 MiB", line: 2))
        XCTAssertEqual(result.last, .fields(["http://a/2.jpg", "ok"], line: (RecordReader.maxRecordBytes / 28) + 103))
    }

    func testBlankLinesHaveNoFieldsButAQuotedEmptyFieldIsOne() {
        XCTAssertEqual(records("url\n\n\"\"\n\r\n"), [
            .fields(["url"], line: 1), .fields([], line: 2), .fields([""], line: 3), .fields([], line: 4),
        ])
    }

    func testAByteOrderMarkCutAcrossReadsIsStillDropped() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let writer = fds[1]
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("url,caption\nhttp://a/1.jpg,x\n".utf8)
        let thread = Thread {
            // One byte per write, with pauses, so that reads see the mark in pieces.
            for byte in bytes {
                _ = withUnsafeBytes(of: byte) { Glibc.write(writer, $0.baseAddress, 1) }
                usleep(2000)
            }
            close(writer)
        }
        thread.start()
        defer { close(fds[0]) }
        var reader = RecordReader(descriptor: fds[0], dialect: .csv)
        XCTAssertEqual(reader.next(), .fields(["url", "caption"], line: 1))
        XCTAssertEqual(reader.next(), .fields(["http://a/1.jpg", "x"], line: 2))
        XCTAssertNil(reader.next())
    }

    func testFieldsAcrossChunkBoundaries() {
        // Records that straddle the reader's 64 KiB chunks, quotes and doubled quotes included.
        var text = ""
        var expected: [RecordReader.Record] = []
        for index in 0..<3000 {
            let caption = String(repeating: "é\"", count: index % 37)
            text += "http://a/\(index).jpg,\"\(caption.replacingOccurrences(of: "\"", with: "\"\""))\"\n"
            expected.append(.fields(["http://a/\(index).jpg", caption], line: index + 1))
        }
        let read = records(text)
        XCTAssertEqual(read.count, expected.count)
        // The first difference only: a full diff of 3000 records says nothing more.
        if let index = read.indices.first(where: { $0 < expected.count && read[$0] != expected[$0] }) {
            XCTFail("record \(index): \(read[index]) instead of \(expected[index])")
        }
    }

    func testTSVSplitsAtTabsWithoutQuoting() {
        XCTAssertEqual(records("url\tcaption\r\nhttp://a/1.jpg\t\"quoted\" text\n\nx", .tsv), [
            .fields(["url", "caption"], line: 1),
            .fields(["http://a/1.jpg", "\"quoted\" text"], line: 2),
            .fields([], line: 3),
            .fields(["x"], line: 4),
        ])
        XCTAssertEqual(records("a,b\r"), [.fields(["a", "b"], line: 1)], "a last CRLF cut after its CR")
    }

    // MARK: - TableReader

    private func table(_ text: String, _ settings: TableSettings = TableSettings(format: .csv)) throws -> [(Int, ListEntry)] {
        let fd = descriptor(Array(text.utf8))
        defer { close(fd) }
        var reader = try TableReader(descriptor: fd, dialect: .csv, settings: settings, listName: "list.csv")
        var entries: [(Int, ListEntry)] = []
        while let next = reader.next() { entries.append((next.line, next.entry)) }
        return entries
    }

    func testRowsBecomeItemsWithTheirCaptionAndOtherColumns() throws {
        var settings = TableSettings(format: .csv, urlColumn: "link")
        settings.captionColumn = "text"
        let entries = try table("id,link,text,lang\n7,http://a/x.jpg,a dog,en\n\n8,,no url,de\n9,http://a/y.jpg,short\n", settings)
        XCTAssertEqual(entries.count, 4)
        guard case .item(let item) = entries[0].1 else { return XCTFail("\(entries[0])") }
        XCTAssertEqual(item.url.normalized, "http://a/x.jpg")
        XCTAssertEqual(item.row, TableRow(caption: "a dog", columns: [TableColumn(name: "id", value: "7"), TableColumn(name: "lang", value: "en")]))
        XCTAssertEqual(item.row?.columnsJSON, #"{"id":"7","lang":"en"}"#)
        XCTAssertEqual(entries[1].1, .skip)
        XCTAssertEqual(entries[2].0, 4)
        XCTAssertEqual(entries[2].1, .invalid(text: "", reason: "empty URL in column 'link'",
                                              row: TableRow(caption: "no url", columns: [TableColumn(name: "id", value: "8"),
                                                                                          TableColumn(name: "lang", value: "de")])))
        XCTAssertEqual(entries[3].1, .invalid(text: "http://a/y.jpg", reason: "row has 3 fields, the header has 4"))
    }

    func testAMissingColumnOrHeaderIsAUsageErrorNamingIt() {
        XCTAssertThrowsError(try table("id,link\n1,http://a/x.jpg\n")) { error in
            XCTAssertEqual((error as? ListError)?.message,
                           "list 'list.csv' has no column 'url' for the URLs (its columns: 'id', 'link'; choose one with --url-column)")
        }
        var settings = TableSettings(format: .csv)
        settings.captionColumn = "caption"
        XCTAssertThrowsError(try table("url\nhttp://a/x.jpg\n", settings)) { error in
            XCTAssertEqual((error as? ListError)?.message, "list 'list.csv' has no column 'caption' for the captions (its columns: 'url')")
        }
        XCTAssertThrowsError(try table("url,a,b,a\n")) { error in
            XCTAssertEqual((error as? ListError)?.message, "list 'list.csv' has two columns named 'a'; rename one")
        }
        XCTAssertThrowsError(try table("\n\n")) { error in
            XCTAssertEqual((error as? ListError)?.message, "list 'list.csv' has no header row (--input-format csv)")
        }
    }
}

extension RecordReaderTests {
    func testARecordThatNeverEndsIsReportedAtOnceAndGivenUpOnPast64MiB() {
        for dialect in [RecordReader.Dialect.csv, .tsv, .lines] {
            let fd = open("/dev/zero", O_RDONLY)
            defer { close(fd) }
            var reader = RecordReader(descriptor: fd, dialect: dialect)
            XCTAssertEqual(reader.next(), .invalid(reason: "record longer than 1 MiB", line: 1))
            guard case .readError(let message, let line)? = reader.next() else { return XCTFail("no stop for \(dialect)") }
            XCTAssertEqual(line, 1)
            XCTAssertTrue(message.contains("runs past 64 MiB without ending"), message)
            XCTAssertNil(reader.next())
        }
    }

    func testTheRestOfAnOverlongQuotedRecordIsSkippedWithItsQuotes() {
        // Past 1 MiB inside quotes; the quoted part holds line breaks and "" before it closes.
        let long = String(repeating: "y", count: (1 << 20) + 10)
        let text = "a,\"\(long)\nstill \"\"quoted\"\"\nend\",b\nnext,row\n"
        XCTAssertEqual(records(text), [.invalid(reason: "record longer than 1 MiB", line: 1), .fields(["next", "row"], line: 4)])
    }
}
