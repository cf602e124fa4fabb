import Foundation
import XCTest

/// img2dataset's filters and records in a dataset: `--min-size` and `--max-aspect-ratio` (classes
/// `too-small`, `aspect-ratio`, decided from the header), `--hash`, `--verify-hash` (class
/// `hash-mismatch`, a column with bad hex failing its row before any request), `--extract-exif`
/// (the string img2dataset's exifread gives), and the stats img2dataset's tools read, per shard
/// and for the dataset.
final class DatasetFilterTests: EndToEndTestCase {
    /// exif.jpg, exif.png, exif.webp, plain.jpg → what img2dataset records for each.
    private var img2datasetExif: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        let made = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/dataset_fixtures.py").path,
                                           server.root.path],
                                          executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(made.exitCode, 0, made.stderr)
        img2datasetExif = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: String])
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    private func records(_ tar: String) throws -> [String: [String: Any]] {
        let dir = scratch.file("untar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let untar = try ImgFetchRunner.run(["-xf", tar, "-C", dir.path], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(untar.exitCode, 0, untar.stderr)
        var records: [String: [String: Any]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".json") {
            let data = try Data(contentsOf: dir.appendingPathComponent(name))
            records[String(name.dropLast(5))] = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        return records
    }

    private func stats(_ name: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: outputData(name)) as? [String: Any])
    }

    private func digest(_ algorithm: String, of name: String) throws -> String {
        let run = try ImgFetchRunner.run(["-c", "import hashlib,sys; print(hashlib.\(algorithm)(open(sys.argv[1],'rb').read()).hexdigest())",
                                          server.root.appendingPathComponent(name).path],
                                         executable: URL(fileURLWithPath: "/usr/bin/python3"))
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testSizeFiltersFailRowsByClassAndTheStatsCountThemAsImg2datasetDoes() throws {
        let names = ["20x20.jpg", "64x64.jpg", "200x50.jpg", "60x30.jpg", "30x90.jpg"]
        let list = try scratch.write("sizes.txt", names.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--shard-samples", "3",
                                          "--min-size", "30", "--max-aspect-ratio", "3.5", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let lines = try jsonLines(run.stdout)
        XCTAssertEqual(lines.map { ($0["error"] as? [String: Any])?["class"] as? String }, ["too-small", nil, "aspect-ratio", nil, nil])
        XCTAssertEqual((lines[0]["error"] as? [String: Any])?["message"] as? String,
                       "20×20 image, smaller than --min-size 30 on its shorter side")
        XCTAssertEqual((lines[2]["error"] as? [String: Any])?["message"] as? String,
                       "200×50 image has a 4 aspect ratio, over --max-aspect-ratio 3.5")
        XCTAssertEqual(Set(try records(outputDirectory + "/000000.tar").keys), ["000000_000001"])
        XCTAssertEqual(Set(try records(outputDirectory + "/000001.tar").keys), ["000001_000000", "000001_000001"])
        // Each shard's stats, with img2dataset's names, and the dataset's sum.
        let first = try stats("000000_stats.json")
        XCTAssertEqual(first["count"] as? Int, 3)
        XCTAssertEqual(first["successes"] as? Int, 1)
        XCTAssertEqual(first["failed_to_download"] as? Int, 0)
        XCTAssertEqual(first["failed_to_resize"] as? Int, 2)
        XCTAssertEqual(first["status_dict"] as? [String: Int], ["success": 1, "too-small": 1, "aspect-ratio": 1])
        XCTAssertNotNil(first["start_time"] as? Double, "seconds since 1970, as img2dataset writes them")
        XCTAssertNotNil(first["duration"] as? Double)
        let total = try stats("stats.json")
        XCTAssertEqual(total["shards"] as? Int, 2)
        XCTAssertEqual(total["count"] as? Int, 5)
        XCTAssertEqual(total["successes"] as? Int, 3)
        XCTAssertEqual(total["failed_to_resize"] as? Int, 2)
        XCTAssertEqual(total["status_dict"] as? [String: Int], ["success": 3, "too-small": 1, "aspect-ratio": 1])
        // A re-run that makes shard 0 again (its stats file gone) and skips shard 1 sums both.
        try FileManager.default.removeItem(atPath: outputDirectory + "/000000_stats.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: outputDirectory + "/stats.json"))
        let again = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--shard-samples", "3",
                                            "--min-size", "30", "--max-aspect-ratio", "3.5", "--jsonl"])
        XCTAssertEqual(try jsonLines(again.stdout).filter { $0["status"] as? String == "skipped" }.count, 2, again.stderr)
        XCTAssertEqual(try stats("stats.json")["count"] as? Int, 5)
        XCTAssertEqual(try stats("stats.json")["successes"] as? Int, 3)
        // A re-run with nothing to do writes nothing, stats.json included (the same file, not a new one).
        let arguments = [list, "-o", outputDirectory, "--output-format", "webdataset", "--shard-samples", "3",
                         "--min-size", "30", "--max-aspect-ratio", "3.5", "--jsonl"]
        let before = try FileManager.default.attributesOfItem(atPath: outputDirectory + "/stats.json")[.systemFileNumber] as? Int
        _ = try ImgFetchRunner.run(arguments)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: outputDirectory + "/stats.json")[.systemFileNumber] as? Int, before)
        // One that finds it stale (an earlier build's dataset has none) writes it.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: outputDirectory + "/stats.json"))
        _ = try ImgFetchRunner.run(arguments)
        XCTAssertEqual(try stats("stats.json")["count"] as? Int, 5)

        // In files mode, a filtered image is not saved.
        let files = scratch.file("files").path
        let filesRun = try ImgFetchRunner.run([list, "-o", files, "--min-size", "30", "--max-aspect-ratio", "3.5", "-q"])
        XCTAssertEqual(filesRun.exitCode, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files).filter { !$0.hasPrefix(".") }.sorted(),
                       ["30x90.jpg", "60x30.jpg", "64x64.jpg"])
    }

    func testHashAlgorithmsAndVerifyHashAgainstAColumn() throws {
        let good = try digest("sha256", of: "64x64.jpg")
        let table = try scratch.write("hashes.csv", """
            url,sha256
            \(server.url("/files/64x64.jpg")),\(good.uppercased())
            \(server.url("/files/60x30.jpg")),\(good)
            \(server.url("/files/30x90.jpg")),not-hex
            \(server.url("/files/20x20.jpg")),

            """)
        let run = try ImgFetchRunner.run([table, "-o", outputDirectory, "--output-format", "webdataset", "--verify-hash", "sha256",
                                          "--hash", "md5", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let lines = try jsonLines(run.stdout)
        XCTAssertEqual(lines.map { ($0["error"] as? [String: Any])?["class"] as? String }, [nil, "hash-mismatch", "invalid-input", "invalid-input"])
        XCTAssertEqual((lines[2]["error"] as? [String: Any])?["message"] as? String,
                       "column 'sha256' holds 'not-hex', not a SHA-256 (64 hex digits) for --verify-hash")
        XCTAssertEqual((lines[3]["error"] as? [String: Any])?["message"] as? String, "no value in column 'sha256' for --verify-hash")
        XCTAssertEqual(try server.requests(to: "/files/30x90.jpg").count, 0, "a bad hash is found before any request")
        XCTAssertEqual(try server.requests(to: "/files/20x20.jpg").count, 0)
        let record = try XCTUnwrap(try records(outputDirectory + "/000000.tar")["000000_000000"])
        XCTAssertEqual(record["md5"] as? String, try digest("md5", of: "64x64.jpg"), "--hash md5 names the field after it")
        XCTAssertNil(record["sha256"], "the verified column is left out, as img2dataset leaves it out")
        XCTAssertNil(record["columns"])
        XCTAssertEqual(try stats("000000_stats.json")["failed_to_download"] as? Int, 3)

        // An algorithm given after the column; SHA-512 recorded.
        let md5Table = try scratch.write("md5.csv", "url,checksum\n\(server.url("/files/64x64.jpg")),\(try digest("md5", of: "64x64.jpg"))\n")
        let md5 = try ImgFetchRunner.run([md5Table, "-o", scratch.file("md5").path, "--output-format", "webdataset",
                                          "--verify-hash", "checksum:md5", "--hash", "sha512", "--jsonl"])
        XCTAssertEqual(md5.exitCode, 0, md5.stderr)
        let md5Record = try XCTUnwrap(try records(scratch.file("md5").path + "/000000.tar")["000000_000000"])
        XCTAssertEqual(md5Record["sha512"] as? String, try digest("sha512", of: "64x64.jpg"))

        // A column the table lacks, and an algorithm misspelt, are usage errors before any request.
        let missing = try ImgFetchRunner.run([table, "-o", scratch.file("x").path, "--output-format", "webdataset", "--verify-hash", "md5"])
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("has no column 'md5' for --verify-hash (its columns: 'url', 'sha256')"), missing.stderr)
        let misspelt = try ImgFetchRunner.run([table, "--output-format", "webdataset", "--verify-hash", "sha256:sha265"])
        XCTAssertEqual(misspelt.exitCode, 2)
        XCTAssertTrue(misspelt.stderr.contains("did you mean 'sha256:sha256'?"), misspelt.stderr)
        let filesMode = try ImgFetchRunner.run([table, "--verify-hash", "sha256"])
        XCTAssertEqual(filesMode.exitCode, 2)
        XCTAssertTrue(filesMode.stderr.contains("option '--verify-hash' needs --output-format webdataset"), filesMode.stderr)
    }

    func testAParquetHashColumnOfNumbersIsRefused() throws {
        let list = scratch.file("numbers.parquet").path
        let run = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/make_parquet.py").path, list,
                                          "--rows", "3", "--url-base", server.url("/files")],
                                         executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let refused = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--verify-hash", "width"])
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("column 'width' holds INT64, not hex digests as text (--verify-hash)"), refused.stderr)
        XCTAssertEqual(try server.requests(to: "/files/").count, 0)
    }

    func testExtractExifRecordsWhatImg2datasetRecords() throws {
        let names = ["exif.jpg", "exif.png", "exif.webp", "plain.jpg"]
        let list = try scratch.write("exif.txt", names.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--extract-exif",
                                          "--save-as", "jpeg", "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let records = try records(outputDirectory + "/000000.tar")
        for (row, name) in names.enumerated() {
            let exif = try XCTUnwrap(records[String(format: "000000_%06d", row)]?["exif"] as? String, name)
            let mine = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(exif.utf8)) as? [String: String], name)
            let theirs = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try XCTUnwrap(img2datasetExif[name]).utf8)) as? [String: String])
            XCTAssertEqual(mine, theirs, name)
        }
        XCTAssertEqual(try XCTUnwrap(JSONSerialization.jsonObject(with: Data((records["000000_000000"]?["exif"] as? String ?? "").utf8))
                                     as? [String: String])["Image Make"], "imgfetch test camera")
    }
}
