import Foundation
import XCTest
@testable import ImgFetchCore

/// `ShardWriter` when a write fails mid-shard: the shard is broken for good and writes nothing
/// more anywhere, and an earlier run's stats file cannot vouch for what this run wrote.
final class ShardWriterTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-shard-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A saved row whose output is `bytes`.
    private func savedRow(_ bytes: [UInt8], line: Int) throws -> ItemReport {
        let file = try TempFile.create(in: directory)
        XCTAssertNil(bytes.withUnsafeBytes { file.write($0) })
        var result = DownloadResult(status: .saved)
        result.format = .jpeg
        result.handedOver = try OutputFile(file)
        return ItemReport(position: ListPosition(listName: "list", line: line), displayURL: "http://x/\(line).jpg", result: result)
    }

    func testABrokenShardWritesNothingMoreEvenWhereItsDescriptorsNumbersAreReused() throws {
        let writer = ShardWriter(shard: 0, directory: directory, pixelExtension: nil)
        XCTAssertEqual(writer.add(try savedRow([1, 2, 3], line: 1), key: "k1").result.status, .saved)
        // Files may grow to 8 KiB: the next 20 KB sample breaks the shard (EFBIG, SIGXFSZ ignored).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let saved = limit
        let previous = signal(SIGXFSZ, SIG_IGN)
        limit.rlim_cur = 8192
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let big = try savedRow([UInt8](repeating: 9, count: 20_000), line: 2)
        let broken = writer.add(big, key: "k2")
        var restore = saved
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &restore)
        signal(SIGXFSZ, previous)
        XCTAssertEqual(broken.result.status, .failed)
        XCTAssertTrue(broken.result.error?.message.contains("shard 000000.tar not written") ?? false, "\(String(describing: broken.result.error))")

        // The shard's descriptors are closed: a file opened now takes one of their numbers.
        let bystander = directory + "/bystander"
        let fd = open(bystander, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd) }
        let later = writer.add(try savedRow([4, 5, 6], line: 3), key: "k3")
        XCTAssertEqual(later.result.status, .failed)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: bystander)[.size] as? Int, 0,
                       "the broken shard wrote into a file that took its descriptor's number")
        XCTAssertThrowsError(try writer.commit(inputDigest: "d", settings: "s"))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "bystander" }
        XCTAssertEqual(left, [], "no shard file, no temp file")
    }

    func testOpeningAShardRemovesAnEarlierRunsStatsFile() throws {
        try Data("{\"input_sha256\":\"old\"}".utf8).write(to: URL(fileURLWithPath: directory + "/000000_stats.json"))
        let writer = ShardWriter(shard: 0, directory: directory, pixelExtension: nil)
        _ = writer.add(try savedRow([1], line: 1), key: "k1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/000000_stats.json"))
        try writer.commit(inputDigest: "new", settings: "s")
        let stats = try String(contentsOfFile: directory + "/000000_stats.json", encoding: .utf8)
        XCTAssertTrue(stats.contains("\"input_sha256\":\"new\""), stats)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: directory + "/000000.tar")[.size] as? Int)
        XCTAssertTrue(stats.contains("\"tar_bytes\":\(size),"), stats)
        var counts = ShardStats()
        counts.count(DownloadResult(status: .saved))
        XCTAssertEqual(FinishedShard.read(shard: 0, in: directory), FinishedShard(digest: "new", settings: "s", failures: [:],
            made: [0: .init(outcome: .init(status: .saved, httpStatus: nil, bytes: 0), format: .jpeg, image: nil)], stats: counts))
        // A tar of another size than the stats say is not a finished shard.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/000000.tar"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(count: 512))
        try handle.close()
        XCTAssertNil(FinishedShard.read(shard: 0, in: directory))
    }

    func testAFinishedShardsResultsSayWhatEachRowWasAndAnUnreadableOneIsNoFinishedShard() {
        let lines = [
            #"{"url":"http://h/a.jpg","status":"saved","http_status":200,"bytes":5120,"format":"jpeg","width":640,"height":480,"#
                + #""channels":3,"bit_depth":8,"verified":true,"output_width":256,"output_height":256,"error":null,"key":"k0"}"#,
            #"{"url":"bad","status":"failed","http_status":null,"error":{"class":"invalid-input","message":"not a valid URL: \"bad\""},"key":"k1"}"#,
            #"{"url":"http://h/c.jpg","status":"failed","http_status":404,"error":{"class":"http","message":"HTTP 404"},"key":"k2"}"#,
            #"{"url":"http://h/d.jpg","status":"skipped","http_status":null,"bytes":0,"format":null,"width":null,"#
                + #""skip_reason":"robots.txt: Disallow: /","error":null,"key":"k3"}"#,
        ]
        let file = Array((lines.joined(separator: "\n") + "\n").utf8)
        let read = FinishedShard.rowResults(in: file, rows: 4)
        XCTAssertEqual(read?.failures,
                       [1: .init(error: DownloadError(.invalidInput, "not a valid URL: \"bad\""), httpStatus: nil),
                        2: .init(error: DownloadError(.http, "HTTP 404"), httpStatus: 404)])
        var image = ImageInfo(width: 640, height: 480, channels: 3, bitDepth: 8, verified: true)
        image.outputWidth = 256
        image.outputHeight = 256
        XCTAssertEqual(read?.made, [0: .init(outcome: .init(status: .saved, httpStatus: 200, bytes: 5120), format: .jpeg, image: image),
                                    3: .init(outcome: .init(status: .skipped, httpStatus: nil, bytes: 0), format: nil, image: nil,
                                             skipReason: "robots.txt: Disallow: /")])
        XCTAssertNil(FinishedShard.rowResults(in: file, rows: 5), "a results file short of the stats file's rows")
        XCTAssertNil(FinishedShard.rowResults(in: Array((lines[0] + "\n{\"url\":\n").utf8), rows: 2), "a torn line")
        XCTAssertNil(FinishedShard.rowResults(in: Array(#"{"status":"failed","error":null}"#.utf8), rows: 1), "a failure without its error")
        XCTAssertNil(FinishedShard.rowResults(in: Array(#"{"status":"lost","error":null}"#.utf8), rows: 1), "a status imgfetch does not write")
    }

    func testAShardWithARowThatFailedForWantOfDiskIsNotFinished() throws {
        let writer = ShardWriter(shard: 0, directory: directory, pixelExtension: nil)
        _ = writer.add(try savedRow([1], line: 1), key: "k1")
        try writer.commit(inputDigest: "d", settings: "s")
        XCTAssertNotNil(FinishedShard.read(shard: 0, in: directory))
        let results = directory + "/000000.jsonl"
        let line = #"{"url":"http://h/a.jpg","status":"failed","http_status":200,"error":{"class":"filesystem","message":"No space left on device"}}"#
        try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: results))
        XCTAssertNil(FinishedShard.read(shard: 0, in: directory), "a retry after exit 75 must fetch the shard again")
    }
}
