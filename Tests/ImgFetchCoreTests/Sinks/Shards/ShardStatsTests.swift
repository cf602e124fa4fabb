import XCTest
@testable import ImgFetchCore

/// `ShardStats`: img2dataset's fields with its meanings, sums, and stats files of earlier builds read back.
final class ShardStatsTests: XCTestCase {
    private func failed(_ kind: DownloadError.Kind) -> DownloadResult {
        .failed(DownloadError(kind, "x"))
    }

    func testImg2datasetFieldsSplitDownloadAndResizeFailures() throws {
        var stats = ShardStats()
        for result in [DownloadResult(status: .saved), DownloadResult(status: .saved), failed(.http), failed(.hashMismatch),
                       failed(.notAnImage), failed(.tooSmall), failed(.aspectRatio), failed(.truncated)] {
            stats.count(result)
        }
        var json = JSONWriter()
        stats.write(to: &json)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.object.utf8)) as? [String: Any])
        XCTAssertEqual(object["count"] as? Int, 8)
        XCTAssertEqual(object["successes"] as? Int, 2)
        XCTAssertEqual(object["failed_to_download"] as? Int, 2)
        XCTAssertEqual(object["failed_to_resize"] as? Int, 4)
        XCTAssertEqual(object["status_dict"] as? [String: Int], ["success": 2, "http": 1, "hash-mismatch": 1, "not-an-image": 1,
                                                                 "too-small": 1, "aspect-ratio": 1, "truncated": 1])
        // Read back, and summed.
        var total = try XCTUnwrap(ShardStats(members: try JSONObjectScanner.members(of: Array(json.object.utf8))))
        XCTAssertEqual(total, stats)
        total.add(stats)
        XCTAssertEqual(total.successes, 4)
        XCTAssertEqual(total.failedToResize, 8)
    }

    func testAStatsFileOfAnEarlierBuildCountsItsDecodeClassesAsResizeFailures() throws {
        let old = #"{"shard":"000000","rows":5,"status":{"saved":2,"skipped":0,"failed":3,"cancelled":0},"errors":{"http":1,"notAnImage":2}}"#
        let stats = try XCTUnwrap(ShardStats(members: try JSONObjectScanner.members(of: Array(old.utf8))))
        XCTAssertEqual(stats.rows, 5)
        XCTAssertEqual(stats.successes, 2)
        XCTAssertEqual(stats.failedToResize, 2)
        XCTAssertEqual(stats.failedToDownload, 1)
        XCTAssertNil(ShardStats(members: try JSONObjectScanner.members(of: Array(#"{"rows":1}"#.utf8))))
    }
}
