import Glibc
import XCTest
@testable import ImgFetchCore

final class LineReaderTests: XCTestCase {
    func testLFLines() throws {
        XCTAssertEqual(try readAll("one\ntwo\nthree\n"), [
            .text("one", number: 1), .text("two", number: 2), .text("three", number: 3),
        ])
    }

    func testCRLFLines() throws {
        XCTAssertEqual(try readAll("one\r\ntwo\r\n"), [.text("one", number: 1), .text("two", number: 2)])
    }

    func testMixedLineEndings() throws {
        XCTAssertEqual(try readAll("a\r\nb\nc\r\n"), [.text("a", number: 1), .text("b", number: 2), .text("c", number: 3)])
    }

    func testByteOrderMarkIsDropped() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("http://example.com/a.jpg\r\nnext\n".utf8)
        XCTAssertEqual(try readAll(bytes), [.text("http://example.com/a.jpg", number: 1), .text("next", number: 2)])
    }

    func testLastLineWithoutNewline() throws {
        XCTAssertEqual(try readAll("one\ntwo"), [.text("one", number: 1), .text("two", number: 2)])
    }

    func testBlankLinesAreNumbered() throws {
        XCTAssertEqual(try readAll("\n\nthird\n\n"), [
            .text("", number: 1), .text("", number: 2), .text("third", number: 3), .text("", number: 4),
        ])
    }

    func testEmptyInputGivesNoLines() throws {
        XCTAssertEqual(try readAll(""), [])
        try withPipe([]) { fd in
            var reader = LineReader(descriptor: fd)
            XCTAssertNil(reader.next())
            XCTAssertNil(reader.next(), "next() after the end must stay nil")
        }
    }

    func testReadsThroughAPipe() throws {
        try withPipe(Array("first\r\nsecond\nlast".utf8)) { fd in
            var reader = LineReader(descriptor: fd)
            XCTAssertEqual(reader.next(), .text("first", number: 1))
            XCTAssertEqual(reader.next(), .text("second", number: 2))
            XCTAssertEqual(reader.next(), .text("last", number: 3))
            XCTAssertNil(reader.next())
        }
    }

    func testUTF8IsDecoded() throws {
        XCTAssertEqual(try readAll("http://example.com/café.jpg\n"), [.text("http://example.com/café.jpg", number: 1)])
    }

    func testLongLineIsTooLongAndTheNextLineIsStillRead() throws {
        let long = String(repeating: "x", count: 100 * 1024)
        XCTAssertEqual(try readAll("first\n" + long + "\nafter\n"), [
            .text("first", number: 1), .tooLong(number: 2), .text("after", number: 3),
        ])
    }

    func testLongLineWithCRLFAndNoTrailingNewlineAfterIt() throws {
        let long = String(repeating: "y", count: 100 * 1024)
        XCTAssertEqual(try readAll(long + "\r\nafter"), [.tooLong(number: 1), .text("after", number: 2)])
    }

    func testLongLastLineWithoutNewline() throws {
        let long = String(repeating: "z", count: 100 * 1024)
        XCTAssertEqual(try readAll("a\n" + long), [.text("a", number: 1), .tooLong(number: 2)])
    }

    func testSeveralLongLines() throws {
        let long = String(repeating: "w", count: 70 * 1024)
        XCTAssertEqual(try readAll(long + "\n" + long + "\nok\n"), [.tooLong(number: 1), .tooLong(number: 2), .text("ok", number: 3)])
    }

    func testLineAtTheLimitIsKept() throws {
        let limit = String(repeating: "k", count: LineReader.maxLineBytes)
        XCTAssertEqual(try readAll(limit + "\n" + limit + "k\n"), [.text(limit, number: 1), .tooLong(number: 2)])
    }

    func testManyLinesAcrossChunkBoundaries() throws {
        let lines = (1...20_000).map { "http://example.com/\($0).jpg" }
        let read = try readAll(lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(read.count, lines.count)
        XCTAssertEqual(read, lines.enumerated().map { .text($1, number: $0 + 1) })
    }

    func testReadErrorIsReported() throws {
        let fd = open("/tmp", O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var reader = LineReader(descriptor: fd)
        guard case .readError(let message, let number)? = reader.next() else { return XCTFail("reading a directory succeeded") }
        XCTAssertFalse(message.isEmpty)
        XCTAssertEqual(number, 1)
        XCTAssertNil(reader.next())
    }

    // MARK: - Helpers

    private func readAll(_ text: String) throws -> [LineReader.Line] {
        try readAll(Array(text.utf8))
    }

    /// Writes `bytes` to a temp file and reads it back line by line (a pipe would block on 100 KB).
    private func readAll(_ bytes: [UInt8]) throws -> [LineReader.Line] {
        var template = Array("/tmp/imgfetch-lines-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        XCTAssertGreaterThanOrEqual(fd, 0)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer {
            close(fd)
            unlink(path)
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        XCTAssertEqual(written, bytes.count)
        XCTAssertEqual(lseek(fd, 0, SEEK_SET), 0)
        var reader = LineReader(descriptor: fd)
        var lines: [LineReader.Line] = []
        while let line = reader.next() {
            lines.append(line)
            if lines.count > 1_000_000 { break }
        }
        return lines
    }

    /// Runs `body` with the read end of a pipe that holds `bytes` and is closed for writing.
    private func withPipe(_ bytes: [UInt8], _ body: (Int32) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, $0.count) }
            XCTAssertEqual(written, bytes.count)
        }
        close(fds[1])
        defer { close(fds[0]) }
        try body(fds[0])
    }
}

extension LineReaderTests {
    func testALineThatNeverEndsIsReportedAtOnceAndGivenUpOnPast64MiB() {
        let fd = open("/dev/zero", O_RDONLY)
        defer { close(fd) }
        var reader = LineReader(descriptor: fd)
        XCTAssertEqual(reader.next(), .tooLong(number: 1))
        guard case .readError(let message, let number)? = reader.next() else { return XCTFail("no stop") }
        XCTAssertEqual(number, 1)
        XCTAssertTrue(message.contains("runs past 64 MiB without ending"), message)
        XCTAssertNil(reader.next())
    }
}
