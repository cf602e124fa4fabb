import Foundation
import XCTest

/// The library's boundary: `Examples/ShardsToS3`, a program built against ImgFetchCore alone (its
/// target depends on nothing else), reads a CSV, fetches its images from the test server into
/// WebDataset shards, and uploads them to a real S3 server (moto, checking every signature).
final class LibraryBoundaryTests: EndToEndTestCase {
    private var example: URL { ImgFetchRunner.binary.deletingLastPathComponent().appendingPathComponent("imgfetch-example-shards") }

    func testAProgramOfTheLibraryAloneReadsACSVAndUploadsShards() throws {
        let store = try S3TestStore(bucket: "library")
        defer { store.stop() }
        let names = try server.addSamples(count: 3, seed: 9)
        var rows = ["url,caption"]
        for (index, name) in names.enumerated() { rows.append("\(server.url("/files/" + name)),\"picture \(index), with a comma\"") }
        rows.append("not a url,broken")
        let table = try scratch.write("photos.csv", rows.joined(separator: "\n") + "\n")

        let run = try ImgFetchRunner.run([table, scratch.file("work").path, "s3://library/ds", "4"],
                                         environment: store.environment, executable: example)
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let results = try run.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(results.count, names.count + 1)
        XCTAssertEqual(results.filter { $0["status"] as? String == "saved" }.count, names.count, run.stdout)
        XCTAssertEqual(results.last?["status"] as? String, "failed")
        XCTAssertEqual(results.map { $0["key"] as? String }, (0...names.count).map { index in
            "00000\(index / 4)_00000\(index % 4)"
        })

        // Every shard went up whole: its tar, its results and its stats, nothing left behind locally.
        let objects = try store.objects(prefix: "ds/")
        let shardCount = (names.count + 1 + 3) / 4
        XCTAssertEqual(Set(objects.keys), Set((0..<shardCount).flatMap { shard in
            ["ds/00000\(shard).tar", "ds/00000\(shard).jsonl", "ds/00000\(shard)_stats.json"]
        } + ["ds/stats.json"]))
        let tar = scratch.file("000000.tar")
        try store.data("ds/000000.tar").write(to: tar)
        let members = try ImgFetchRunner.runShell("tar -tf '\(tar.path)'").stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(members.filter { $0.hasSuffix(".json") }.count, min(4, names.count), "the first shard's rows")
        XCTAssertEqual(members.filter { $0.hasSuffix(".txt") }.count, min(4, names.count))
        let caption = try ImgFetchRunner.runShell("tar -xOf '\(tar.path)' 000000_000001.txt")
        XCTAssertEqual(caption.stdout, "picture 1, with a comma")
        let image = members.first { $0.hasPrefix("000000_000002.") && !$0.hasSuffix(".json") && !$0.hasSuffix(".txt") }
        let bytes = try ImgFetchRunner.runShell("tar -xOf '\(tar.path)' '\(try XCTUnwrap(image))' | sha256sum")
        XCTAssertEqual(bytes.stdout.prefix(64), sha256Hex(try server.fileData(names[2])).prefix(64))

        // The program holds nothing of the command line's module.
        let symbols = try ImgFetchRunner.runShell("nm '\(example.path)' | grep -c 'ImgFetchCLI' || true")
        XCTAssertEqual(symbols.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "0")
    }
}
