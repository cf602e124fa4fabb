import Foundation
import XCTest

/// A large body cut off partway continues where it stopped (`BodyResume`): the retry asks for the
/// rest with `Range` and `If-Range`, and the file is the server's, byte for byte, verified whole.
final class ResumeTests: EndToEndTestCase {
    /// A 24-bit BMP of `side`² noisy pixels: a valid image of 3·side² + 54 bytes.
    private func bitmap(side: Int) -> Data {
        var data = Data("BM".utf8)
        func le32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        let rowBytes = (side * 3 + 3) / 4 * 4
        le32(54 + rowBytes * side); le32(0); le32(54)
        le32(40); le32(side); le32(side); le16(1); le16(24); le32(0); le32(rowBytes * side); le32(2835); le32(2835); le32(0); le32(0)
        var state: UInt32 = 12345
        var row = [UInt8](repeating: 0, count: rowBytes)
        for _ in 0..<side {
            for index in 0..<(side * 3) {
                state = state &* 1_664_525 &+ 1_013_904_223
                row[index] = UInt8(truncatingIfNeeded: state >> 24)
            }
            data.append(contentsOf: row)
        }
        return data
    }

    private func result(_ run: Execution) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try XCTUnwrap(run.stdout.split(separator: "\n").first).utf8)) as? [String: Any])
    }

    func testABodyResetHalfwayIsResumedWithRangeAndIsByteIdentical() throws {
        let image = try server.addFile("big.bmp", bitmap(side: 720))
        let cut = image.count / 2
        let run = try fetch([server.url("/reset-once/\(cut)/resume-a/files/big.bmp")], ["--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let line = try result(run)
        XCTAssertEqual(line["status"] as? String, "saved")
        XCTAssertEqual(line["bytes"] as? Int, image.count)
        XCTAssertEqual(line["attempts"] as? Int, 2)
        XCTAssertEqual(line["verified"] as? Bool, true)
        XCTAssertEqual(try outputData("big.bmp"), image)

        let requests = try server.requests(to: "/reset-once/")
        XCTAssertEqual(requests.count, 2)
        XCTAssertNil(requests[0].header("Range"))
        let range = try XCTUnwrap(requests[1].header("Range"), "the retry asks for the rest")
        let offset = try XCTUnwrap(Int(range.dropFirst("bytes=".count).dropLast()), range)
        XCTAssertTrue(range.hasPrefix("bytes=") && range.hasSuffix("-") && offset > 0 && offset <= cut, range)
        // The server's strong ETag: the rest only of the same bytes.
        let validator = try XCTUnwrap(requests[1].header("If-Range"))
        XCTAssertTrue(validator.hasPrefix("\"") && validator.hasSuffix("\"") && validator.count == 42, validator)
        // What went over the wire: the part before the reset, then only the rest.
        let sent = try server.sentBodies().filter { $0.path.hasPrefix("/reset-once/") }.map(\.bytes)
        XCTAssertEqual(sent.last, image.count - offset, "\(sent)")
        XCTAssertTrue(run.stderr.contains("1 saved"), run.stderr)
    }

    func testAServerThatIgnoresRangeSendsTheWholeBodyAgainWhichReplacesThePart() throws {
        let image = try server.addFile("big.bmp", bitmap(side: 720))
        let run = try fetch([server.url("/no-ranges/reset-once/\(image.count / 3)/resume-b/files/big.bmp")], ["--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try result(run)["bytes"] as? Int, image.count)
        XCTAssertEqual(try outputData("big.bmp"), image)
        let requests = try server.requests(to: "/no-ranges/")
        XCTAssertEqual(requests.count, 2)
        XCTAssertNotNil(requests[1].header("Range"))
        XCTAssertEqual(try server.sentBodies().filter { $0.path.hasPrefix("/no-ranges/") }.last?.bytes, image.count)
    }

    func testAnImageThatChangedIsFetchedWhole() throws {
        // If-Range names the first version; the server has another by the retry: 200, all of it.
        let first = bitmap(side: 720)
        _ = try server.addFile("big.bmp", first)
        var second = first
        second[100] ^= 0xff
        // The reset happens in the first response; the file changes before the retry (its backoff).
        let list = try scratch.write("urls.txt", server.url("/reset-once/\(first.count / 2)/resume-c/delay/0.5/files/big.bmp") + "\n")
        let process = Process()
        process.executableURL = ImgFetchRunner.binary
        process.arguments = [list, "-o", outputDirectory, "--jsonl"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        XCTAssertTrue(try eventually(timeout: 20) { try server.sentBodies().contains { $0.path.hasPrefix("/reset-once/") } })
        _ = try server.addFile("big.bmp", second)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(try outputData("big.bmp"), second)
    }

    func testASmallBodyCutOffStartsOverWithoutRange() throws {
        let image = try server.addFile("small.bmp", bitmap(side: 200))
        let run = try fetch([server.url("/reset-once/\(image.count / 2)/resume-d/files/small.bmp")], ["--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try outputData("small.bmp"), image)
        XCTAssertEqual(try server.requests(to: "/reset-once/").map { $0.header("Range") }, [nil, nil])
    }
}
