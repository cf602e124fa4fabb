import XCTest
@testable import ImgFetchCore

/// The stats object of an uploaded shard names its tar's ETag, as JSON that the re-run reader takes.
final class ShardUploadTests: XCTestCase {
    func testEntityTagsAreComparedWithoutQuotesOrWeakMarkers() {
        XCTAssertEqual(S3Client.plainTag("\"6f16-2\""), "6f16-2")
        XCTAssertEqual(S3Client.plainTag("W/\"6f16\""), "6f16")
        XCTAssertEqual(S3Client.plainTag("6f16-2"), "6f16-2")
        XCTAssertNil(S3Client.plainTag(" "))
        XCTAssertNil(S3Client.plainTag(nil))
    }

    func testTheObjectsETagsAreAddedToTheStatsObject() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shard-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stats = directory.appendingPathComponent("000000_stats.json")
        try Data("{\"shard\":\"000000\",\"tar_bytes\":10240}\n".utf8).write(to: stats)
        try ShardUpload.addTags(["tar_etag": "\"9b2cf535f27731c974343645a3985328\"", "results_etag": "r1"], toStats: "000000_stats.json", in: directory.path)
        let text = try String(contentsOf: stats, encoding: .utf8)
        XCTAssertEqual(text, "{\"shard\":\"000000\",\"tar_bytes\":10240,\"results_etag\":\"r1\","
                           + "\"tar_etag\":\"\\\"9b2cf535f27731c974343645a3985328\\\"\"}\n")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["tar_etag"] as? String, "\"9b2cf535f27731c974343645a3985328\"")

        try Data("not json".utf8).write(to: stats)
        XCTAssertThrowsError(try ShardUpload.addTags(["tar_etag": "\"x\""], toStats: "000000_stats.json", in: directory.path))
    }
}
