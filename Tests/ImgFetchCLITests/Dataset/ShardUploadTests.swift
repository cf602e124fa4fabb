import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The stats object of an uploaded shard names its tar's ETag, as JSON that the re-run reader takes.
final class ShardUploadTests: XCTestCase {
    func testTheTarsETagIsAddedToTheStatsObject() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shard-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stats = directory.appendingPathComponent("000000_stats.json")
        try Data("{\"shard\":\"000000\",\"tar_bytes\":10240}\n".utf8).write(to: stats)
        try ShardUpload.addTarTag("\"9b2cf535f27731c974343645a3985328\"", toStats: stats.path)
        let text = try String(contentsOf: stats, encoding: .utf8)
        XCTAssertEqual(text, "{\"shard\":\"000000\",\"tar_bytes\":10240,\"tar_etag\":\"\\\"9b2cf535f27731c974343645a3985328\\\"\"}\n")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["tar_etag"] as? String, "\"9b2cf535f27731c974343645a3985328\"")

        try Data("not json".utf8).write(to: stats)
        XCTAssertThrowsError(try ShardUpload.addTarTag("\"x\"", toStats: stats.path))
    }
}
