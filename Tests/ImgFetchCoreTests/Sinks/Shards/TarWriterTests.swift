import Foundation
import XCTest
@testable import ImgFetchCore

/// `TarWriter`: what GNU tar reads back, names of any length and alphabet, block layout, and
/// headers that depend on nothing but the members.
final class TarWriterTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-tar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func archive(_ members: [(String, [UInt8])], mtime: Int64 = 1_700_000_000) throws -> URL {
        let url = directory.appendingPathComponent("t-\(UUID().uuidString).tar")
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let writer = TarWriter(fd: fd, displayName: url.path)
        for (name, bytes) in members { try writer.append(name: name, mtime: mtime, bytes: bytes) }
        try writer.finish()
        return url
    }

    private func tar(_ arguments: [String]) throws -> String {
        String(decoding: try tarBytes(arguments), as: UTF8.self)
    }

    private func tarBytes(_ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/tar")
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let bytes = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, problems)
        XCTAssertEqual(problems, "", "tar warned")
        return bytes
    }

    func testGNUTarReadsEveryNameAndEveryByte() throws {
        let long = String(repeating: "k", count: 150) + ".json"
        let members: [(String, [UInt8])] = [
            ("a.jpg", Array(0..<255)), ("a.json", Array("{}".utf8)), ("empty.txt", []),
            (long, Array("long".utf8)), ("café_日本.txt", Array("ü".utf8)), ("exact.bin", [UInt8](repeating: 7, count: 512)),
        ]
        let url = try archive(members)
        XCTAssertEqual(try tar(["-tf", url.path]).split(separator: "\n").map(String.init), members.map(\.0))
        for (name, bytes) in members {
            XCTAssertEqual(try tarBytes(["-xOf", url.path, name]), bytes, name)
        }
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        XCTAssertEqual(size % 512, 0, "whole blocks")
    }

    func testHeadersAreFixedAndTheSameMembersGiveTheSameBytes() throws {
        let members: [(String, [UInt8])] = [("000000_000001.jpg", [1, 2, 3]), ("000000_000001.json", Array("{}".utf8))]
        let first = try Data(contentsOf: try archive(members))
        let second = try Data(contentsOf: try archive(members))
        XCTAssertEqual(first, second)
        let listing = try tar(["--numeric-owner", "--full-time", "--utc", "-tvf", try archive(members, mtime: 0).path])
        XCTAssertEqual(listing, "-rw-r--r-- 0/0               3 1970-01-01 00:00:00 000000_000001.jpg\n"
                       + "-rw-r--r-- 0/0               2 1970-01-01 00:00:00 000000_000001.json\n")
    }

    func testPaxRecordLengthsCountTheirOwnDigits() {
        // " path=x\n" is 8 bytes; with a 1-digit length that is 9, with "9" itself it stays 9.
        XCTAssertEqual(String(decoding: TarWriter.paxRecords(["path=x"]), as: UTF8.self), "9 path=x\n")
        // 98 bytes of body: 2 digits would make 100, which needs 3: "101 ".
        let value = String(repeating: "v", count: 91)
        let record = String(decoding: TarWriter.paxRecords(["path=" + value]), as: UTF8.self)
        XCTAssertEqual(record, "101 path=\(value)\n")
        XCTAssertEqual(record.utf8.count, 101)
    }
}
