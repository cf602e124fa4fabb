import Foundation
import XCTest

/// `--output-format webdataset`: shards in list order, read back by the `webdataset` package (the
/// consumer training jobs use) and by GNU tar, reproducible, atomic, and skipped when complete.
final class WebDatasetTests: EndToEndTestCase {
    private var images: [String] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        images = try server.addSamples(count: 3, seed: 5)
        // A fixed Last-Modified, so that the members' mtime is known.
        for name in images {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)],
                                                  ofItemAtPath: server.root.appendingPathComponent(name).path)
        }
        try server.addFile("broken.jpg", Data(try server.fileData(images.first { $0.hasSuffix(".jpg") }!).prefix(200)))
    }

    /// A CSV of the samples, a 404, a broken image and an empty URL, with captions and an id column.
    private func writeTable() throws -> String {
        var rows = ["id,url,caption,source"]
        for (i, name) in images.enumerated() {
            rows.append("img\(i),\(server.url("/files/" + name)),\"a caption, number \(i)\",\"line\nbreak \(i)\"")
        }
        rows.append("gone,\(server.url("/files/missing.jpg")),missing,x")
        rows.append("bad,\(server.url("/files/broken.jpg")),broken,x")
        rows.append("empty,,no url,x")
        return try scratch.write("table.csv", rows.joined(separator: "\r\n") + "\r\n")
    }

    private func fetchShards(_ table: String, into directory: String? = nil, _ extra: [String] = []) throws -> Execution {
        try ImgFetchRunner.run([table, "-o", directory ?? outputDirectory, "--input-format", "csv", "--caption-column", "caption",
                                "--output-format", "webdataset", "--shard-samples", "4", "--save-as", "jpeg",
                                "--resize", "12", "--fit", "center-crop", "--jsonl"] + extra)
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    private func shard(_ name: String, in directory: String? = nil) -> String {
        (directory ?? outputDirectory) + "/" + name
    }

    func testShardsReadBackWithTheWebDatasetPackage() throws {
        let run = try fetchShards(try writeTable())
        XCTAssertEqual(run.exitCode, 1, "three rows fail: " + run.stderr)
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.count, images.count + 3)
        // Keys follow the list: shard number and row within the shard, in list order.
        let keys = results.map { $0["key"] as? String }
        XCTAssertEqual(keys, (0..<results.count).map { String(format: "%06d_%06d", $0 / 4, $0 % 4) })
        XCTAssertEqual(try outputFiles(), ["000000.jsonl", "000000.tar", "000000_stats.json", "000001.jsonl", "000001.tar",
                                           "000001_stats.json", "000002.jsonl", "000002.tar", "000002_stats.json", "stats.json"])

        let tars = (0...2).map { shard(String(format: "%06d.tar", $0)) }
        let read = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/read_shards.py").path] + tars,
                                          executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(read.exitCode, 0, read.stderr)
        let samples = try jsonLines(read.stdout)
        let saved = results.filter { $0["status"] as? String == "saved" }
        XCTAssertEqual(saved.count, images.count)
        XCTAssertEqual(samples.map { $0["key"] as? String }, saved.map { $0["key"] as? String }, "one sample per saved row, in order")
        for (sample, result) in zip(samples, saved) {
            let key = try XCTUnwrap(result["key"] as? String)
            XCTAssertEqual(sample["members"] as? [String], ["jpg", "json", "txt"], key)
            XCTAssertEqual(sample["image"] as? [AnyHashable], [12, 12, "RGB"], "\(key): the image decodes at its size")
            let record = try XCTUnwrap(sample["json"] as? [String: Any], key)
            XCTAssertEqual(record["key"] as? String, key)
            for field in ["url", "format", "caption"] {
                XCTAssertEqual(record[field] as? String, result[field] as? String, "\(key) \(field)")
            }
            XCTAssertEqual(record["original_width"] as? Int, result["width"] as? Int, key)
            XCTAssertEqual(record["original_height"] as? Int, result["height"] as? Int, key)
            XCTAssertEqual(record["width"] as? Int, 12)
            // The table's other columns at the top level, as img2dataset writes them, and its status fields.
            let columns = try XCTUnwrap(result["columns"] as? [String: String], key)
            for (name, value) in columns { XCTAssertEqual(record[name] as? String, value, "\(key) \(name)") }
            XCTAssertNil(record["columns"], "no column is named like a field")
            XCTAssertEqual(record["status"] as? String, "success", key)
            XCTAssertTrue(record["error_message"] is NSNull, key)
            XCTAssertNil(record["duration_ms"], "no timings in the sample: it must not change between runs")
            XCTAssertEqual(sample["txt"] as? String, result["caption"] as? String, key)
            let url = try XCTUnwrap(result["url"] as? String)
            let name = String(url.split(separator: "/").last!)
            let original = try server.fileData(name)
            XCTAssertEqual(record["sha256"] as? String, sha256Hex(original), "\(key): the SHA-256 of the downloaded bytes")
        }
        // Failures are rows of the results files, not samples.
        let shardResults = try (0...2).flatMap { try jsonLines(String(contentsOfFile: shard(String(format: "%06d.jsonl", $0)), encoding: .utf8)) }
        XCTAssertEqual(shardResults.map { $0["key"] as? String }, keys)
        XCTAssertEqual(shardResults.map { $0["status"] as? String }, results.map { $0["status"] as? String })
        // Rows 4 and 5 are samples, 6 a 404 and 7 a cut-off image; row 8 has no URL.
        let middle = try XCTUnwrap(JSONSerialization.jsonObject(with: outputData("000001_stats.json")) as? [String: Any])
        XCTAssertEqual(middle["rows"] as? Int, 4)
        XCTAssertEqual(middle["status"] as? [String: Int], ["saved": 2, "skipped": 0, "failed": 2, "cancelled": 0])
        XCTAssertEqual(middle["errors"] as? [String: Int], ["http": 1, "truncated": 1])
        let last = try XCTUnwrap(JSONSerialization.jsonObject(with: outputData("000002_stats.json")) as? [String: Any])
        XCTAssertEqual(last["rows"] as? Int, 1)
        XCTAssertEqual(last["status"] as? [String: Int], ["saved": 0, "skipped": 0, "failed": 1, "cancelled": 0])
        XCTAssertEqual(last["errors"] as? [String: Int], ["invalid-input": 1])
        XCTAssertEqual(try ImgFetchRunner.run(["-tf", shard("000002.tar")], executable: URL(fileURLWithPath: "/bin/tar")).stdout, "",
                       "a shard of failures is an empty tar")
    }

    func testGNUTarListsTheMembersInOrderWithFixedHeaders() throws {
        let run = try fetchShards(try writeTable())
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let listing = try ImgFetchRunner.run(["--numeric-owner", "--full-time", "-tvf", shard("000000.tar")], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(listing.exitCode, 0, listing.stderr)
        let lines = listing.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        XCTAssertEqual(lines.map(\.last), (0..<4).flatMap { row in ["jpg", "json", "txt"].map { String(format: "000000_%06d.", row) + $0 } })
        for line in lines {
            XCTAssertEqual(line[0], "-rw-r--r--", line.joined(separator: " "))
            XCTAssertEqual(line[1], "0/0", line.joined(separator: " "))
            // The response's Last-Modified (2023-11-14 22:13:20 UTC), not the time of the run.
            XCTAssertEqual(line[3] + " " + line[4], "2023-11-14 22:13:20", line.joined(separator: " "))
        }
        let format = try ImgFetchRunner.run(["-c", "head -c 512 '\(shard("000000.tar"))' | dd bs=1 skip=257 count=8 2>/dev/null | od -c | head -1"],
                                            executable: URL(fileURLWithPath: "/bin/bash"))
        XCTAssertTrue(format.stdout.contains("u   s   t   a   r  \\0   0   0"), "a POSIX ustar header: \(format.stdout)")
    }

    func testTheSameInputGivesByteIdenticalShardsAndAReRunMakesNoRequest() throws {
        let table = try writeTable()
        let first = try fetchShards(table)
        XCTAssertEqual(first.exitCode, 1)
        let requestsAfterFirst = try server.requests().count
        let other = scratch.file("again").path
        XCTAssertEqual(try fetchShards(table, into: other).exitCode, 1)
        for name in ["000000.tar", "000001.tar", "000002.tar"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: shard(name))), try Data(contentsOf: URL(fileURLWithPath: shard(name, in: other))),
                           "\(name) differs between two runs")
        }
        let before = try server.requests().count
        XCTAssertGreaterThan(before, requestsAfterFirst)
        let rerun = try fetchShards(table)
        XCTAssertEqual(rerun.exitCode, 1, "the rows that failed fail again: \(rerun.stderr)")
        XCTAssertEqual(try server.requests().count, before, "finished shards make no request")
        let results = try jsonLines(rerun.stdout)
        XCTAssertEqual(results.count, images.count + 3)
        // Saved rows are skipped; failed rows are reported as the first run reported them, not as
        // skipped in a tar they are not in.
        let firstResults = try jsonLines(first.stdout)
        XCTAssertEqual(results.map { $0["status"] as? String }, firstResults.map { $0["status"] as? String == "saved" ? "skipped" : "failed" })
        // … word for word (a re-run gives the same rows), while stderr says they are an earlier run's.
        XCTAssertEqual(results.compactMap { ($0["error"] as? [String: Any])?["message"] as? String },
                       firstResults.compactMap { ($0["error"] as? [String: Any])?["message"] as? String })
        XCTAssertEqual(rerun.stderr.components(separatedBy: "(in an earlier run; --retry-failed fetches it again)\n").count - 1, 3,
                       rerun.stderr)
        XCTAssertEqual(results.filter { $0["status"] as? String == "failed" }.count, 3)
        XCTAssertTrue(rerun.stderr.contains("3 failed (1 http, 1 invalid-input, 1 truncated; 3 in an earlier run, "
                                            + "--retry-failed fetches them again)"), rerun.stderr)
        XCTAssertEqual(results.first?["skip_reason"] as? String, "in \(shard("000000.tar")), complete from an earlier run")
        // A skipped row says what the run that made its sample reported, and what the sample is.
        for (again, made) in zip(results, firstResults) where made["status"] as? String == "saved" {
            let earlier = try XCTUnwrap(again["made"] as? [String: Any], "\(again)")
            XCTAssertEqual(earlier["status"] as? String, "saved")
            XCTAssertEqual(earlier["http_status"] as? Int, made["http_status"] as? Int)
            XCTAssertEqual(earlier["bytes"] as? Int, made["bytes"] as? Int)
            for field in ["format", "width", "height", "channels", "bit_depth", "verified", "output_width", "output_height"] {
                XCTAssertEqual("\(again[field] ?? "none")", "\(made[field] ?? "none")", field)
            }
            XCTAssertEqual(again["bytes"] as? Int, 0, "nothing was transferred in this run")
        }
        XCTAssertTrue(firstResults.allSatisfy { $0["made"] is NSNull })
        // A failed row keeps what its body was (a cut-off image's bytes, say), as the first run reported it.
        for (again, made) in zip(results, firstResults) where made["status"] as? String == "failed" {
            for field in ["http_status", "bytes", "format", "width", "height"] {
                XCTAssertEqual("\(again[field] ?? "none")", "\(made[field] ?? "none")", field)
            }
        }
        XCTAssertTrue(firstResults.contains { $0["status"] as? String == "failed" && ($0["bytes"] as? Int ?? 0) > 0 }, "a failure with a body")

        // One row changed: only its shard is fetched again.
        var rows = try String(contentsOfFile: table, encoding: .utf8).components(separatedBy: "\r\n")
        rows[1] = rows[1].replacingOccurrences(of: "a caption, number 0", with: "a new caption")
        try rows.joined(separator: "\r\n").write(toFile: table, atomically: true, encoding: .utf8)
        let changed = try fetchShards(table)
        let statuses = try jsonLines(changed.stdout).map { $0["status"] as? String ?? "" }
        XCTAssertEqual(Array(statuses.prefix(4)), ["saved", "saved", "saved", "saved"])
        XCTAssertEqual(Array(statuses.dropFirst(4)), Array(results.dropFirst(4).map { $0["status"] as? String ?? "" }))
        XCTAssertEqual(try server.requests().count, before + 4)
        let caption = try ImgFetchRunner.run(["-xOf", shard("000000.tar"), "000000_000000.txt"], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(caption.stdout, "a new caption")
    }

    /// A column named like a field imgfetch writes (`status`, `width`) keeps its value under
    /// `"columns"`; the others go to the top level, typed as the table has them (JSON Lines' numbers).
    func testColumnsNamedLikeFieldsStayUnderColumns() throws {
        let name = try XCTUnwrap(images.first { $0.hasSuffix(".jpg") })
        let rows = [#"{"url": "\#(server.url("/files/" + name))", "status": "licensed", "width": "wide", "similarity": 0.31, "n": 7}"#]
        let list = try scratch.write("rows.jsonl", rows.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--resize", "12"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let json = try ImgFetchRunner.run(["-xOf", shard("000000.tar"), "000000_000000.json"], executable: URL(fileURLWithPath: "/bin/tar"))
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(record["similarity"] as? Double, 0.31)
        XCTAssertEqual(record["n"] as? Int, 7)
        XCTAssertEqual(record["status"] as? String, "success")
        XCTAssertEqual(record["width"] as? Int, 12)
        XCTAssertEqual(record["columns"] as? [String: String], ["status": "licensed", "width": "wide"])
    }

    /// A CSV's columns are strings unless `--column-type` says otherwise, and a column named like a
    /// field is said once; a value that is not of its type fails its row, naming the column.
    func testColumnTypesForCSVAndAWarningForNamesLikeFields() throws {
        let name = try XCTUnwrap(images.first { $0.hasSuffix(".jpg") })
        let csv = "url,similarity,id,nsfw,status\n\(server.url("/files/" + name)),0.298575,00123,false,ok\n"
            + "\(server.url("/files/" + name))?2,high,7,true,ok\n"
        let list = try scratch.write("photos.csv", csv)
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--resize", "12",
                                          "--column-type", "similarity=float", "--column-type", "nsfw=bool"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertEqual(run.stderr.components(separatedBy: "column 'status' of \(list) is named like a field").count - 1, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("photos.csv:3: column 'similarity' is not a float: 'high' (--column-type similarity=float)"), run.stderr)
        let json = try ImgFetchRunner.run(["-xOf", shard("000000.tar"), "000000_000000.json"], executable: URL(fileURLWithPath: "/bin/tar"))
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(record["similarity"] as? Double, 0.298575)
        XCTAssertEqual(record["nsfw"] as? Bool, false)
        XCTAssertEqual(record["id"] as? String, "00123", "untyped text stays as written")
        XCTAssertEqual(record["columns"] as? [String: String], ["status": "ok"])
        let wrong = try ImgFetchRunner.run([list, "--column-type", "score=float", "-o", outputDirectory])
        XCTAssertEqual(wrong.exitCode, 2)
        XCTAssertTrue(wrong.stderr.contains("has no column 'score' (--column-type"), wrong.stderr)
    }

    /// Samples smaller than `--resize` are enlarged in a dataset, so a center crop is always N×N
    /// (img2dataset's sizes); `--no-upscale` keeps them small.
    func testSamplesHaveTheSizeAskedFor() throws {
        let table = try writeTable()
        for (extra, size) in [([String](), 1000), (["--no-upscale"], nil)] {
            let out = scratch.file("big\(extra.count)").path
            XCTAssertEqual(try fetchShards(table, into: out, ["--resize", "1000"] + extra).exitCode, 1)
            let json = try ImgFetchRunner.run(["-xOf", shard("000000.tar", in: out), "000000_000000.json"],
                                              executable: URL(fileURLWithPath: "/bin/tar"))
            let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            if let size {
                XCTAssertEqual(record["width"] as? Int, size, json.stdout)
                XCTAssertEqual(record["height"] as? Int, size, json.stdout)
            } else {
                XCTAssertLessThan(record["width"] as? Int ?? 1000, 1000, json.stdout)
            }
        }
    }

    /// `--retry-failed`: the complete shards with failed rows are made again (their rows fetched
    /// again), the others still skipped without a request.
    func testRetryFailedMakesTheShardsWithFailuresAgain() throws {
        let table = try writeTable()
        XCTAssertEqual(try fetchShards(table).exitCode, 1)
        let before = try server.requests().count
        // The missing image is there now.
        try server.addFile("missing.jpg", try server.fileData(images.first { $0.hasSuffix(".jpg") }!))
        let retry = try fetchShards(table, ["--retry-failed"])
        XCTAssertEqual(retry.exitCode, 1, "the broken image and the empty URL fail again: \(retry.stderr)")
        let results = try jsonLines(retry.stdout)
        // Shard 0 (four samples) is skipped; shard 1 (two samples, the 404 and the broken image) and
        // shard 2 (the empty URL) are made again: four requests.
        XCTAssertEqual(try server.requests().count, before + 4)
        XCTAssertEqual(results.map { $0["status"] as? String ?? "" },
                       ["skipped", "skipped", "skipped", "skipped", "saved", "saved", "saved", "failed", "failed"])
        XCTAssertFalse(retry.stderr.contains("earlier run"), retry.stderr)
        let members = try ImgFetchRunner.run(["-tf", shard("000001.tar")], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(members.stdout.split(separator: "\n").filter { $0.hasSuffix(".jpg") }.count, 3, members.stdout)
        XCTAssertEqual(try ImgFetchRunner.run([table, "--retry-failed"]).stderr,
                       "imgfetch: option '--retry-failed' needs --output-format webdataset: with files, a run fetches every "
                           + "item that failed before anyway\nTry 'imgfetch --help' for more information.\n")
    }

    func testAKeyColumnNamesTheSamplesAndABadOrRepeatedKeyFailsItsRow() throws {
        let name = try XCTUnwrap(images.first { $0.hasSuffix(".jpg") })
        let url = server.url("/files/" + name)
        let table = try scratch.write("keys.csv", ["id,url", "cat-1,\(url)", "cat-1,\(url)", "a.b,\(url)", "dog_2,\(url)", ",\(url)"]
            .joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([table, "-o", outputDirectory, "--input-format", "csv", "--key-column", "id",
                                          "--output-format", "webdataset", "--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.map { $0["status"] as? String }, ["saved", "failed", "failed", "saved", "failed"])
        XCTAssertTrue(run.stderr.contains("keys.csv:3: duplicate key 'cat-1' in column 'id' (first at \(table):2)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("keys.csv:4: unusable key 'a.b' in column 'id': a '.'"), run.stderr)
        XCTAssertTrue(run.stderr.contains("keys.csv:6: unusable key '' in column 'id': empty"), run.stderr)
        let listing = try ImgFetchRunner.run(["-tf", shard("000000.tar")], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(listing.stdout.split(separator: "\n"), ["cat-1.jpg", "cat-1.json", "dog_2.jpg", "dog_2.json"])

        // "é" and "e" + U+0301 are the same text to Swift, but different bytes, so different keys.
        let accents = try scratch.write("accents.csv", "id,url\n\u{e9},\(url)\ne\u{301},\(url)\n")
        let both = try ImgFetchRunner.run([accents, "-o", scratch.file("accents").path, "--input-format", "csv", "--key-column", "id",
                                           "--output-format", "webdataset"])
        XCTAssertEqual(both.results.map { $0[0] }, ["saved", "saved"], both.stderr)

        let missing = try ImgFetchRunner.run([table, "-o", outputDirectory, "--input-format", "csv", "--key-column", "key",
                                              "--output-format", "webdataset"])
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("has no column 'key' for the sample keys"), missing.stderr)
    }

    func testARunKilledMidShardLeavesNoShardUnderAFinalName() throws {
        // Row 2 takes 30 s; the run is killed while it waits, with rows 0 and 1 written to the temp tar.
        let first = server.url("/files/" + images[0]), slow = server.url("/delay/30/files/" + images[1])
        let table = try scratch.write("slow.csv", "url\n\(first)\n\(first)\n\(slow)\n")
        let script = "'\(ImgFetchRunner.binary.path)' '\(table)' -o '\(outputDirectory)' --input-format csv --output-format webdataset & "
            + "pid=$!; for i in $(seq 100); do ls -a '\(outputDirectory)' 2>/dev/null | grep -q '000000.tar' && break; sleep 0.1; done; "
            + "sleep 0.5; kill -9 $pid; wait $pid; ls -a '\(outputDirectory)'"
        let killed = try ImgFetchRunner.runShell(script)
        let names = killed.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(names.contains { $0.hasPrefix(".imgfetch-") && $0.hasSuffix("000000.tar") }, "the shard was being written: \(names)")
        XCTAssertFalse(names.contains("000000.tar"), "a truncated tar under its final name: \(names)")
        XCTAssertFalse(names.contains("000000_stats.json"))
        // The next run removes the dead run's temp files and writes the shard whole.
        let table2 = try scratch.write("fast.csv", "url\n\(first)\n")
        XCTAssertEqual(try ImgFetchRunner.run([table2, "-o", outputDirectory, "--input-format", "csv", "--output-format", "webdataset"]).exitCode, 0)
        XCTAssertEqual(try outputFiles(), ["000000.jsonl", "000000.tar", "000000_stats.json", "stats.json"])
    }

    func testAnInterruptedRunDiscardsTheOpenShardAndSaysItsRowsAreCancelled() throws {
        let first = server.url("/files/" + images[0]), slow = server.url("/delay/30/files/" + images[1])
        let table = try scratch.write("slow.csv", "url\n\(first)\n\(first)?2\n\(first)?3\n\(slow)\n")
        let script = "'\(ImgFetchRunner.binary.path)' '\(table)' -o '\(outputDirectory)' --input-format csv --output-format webdataset "
            + "--shard-samples 2 > '\(scratch.file("stdout").path)' & pid=$!; "
            + "for i in $(seq 100); do ls -a '\(outputDirectory)' 2>/dev/null | grep -q '000001.tar' && break; sleep 0.1; done; "
            + "sleep 0.3; kill -INT $pid; wait $pid; echo $?"
        let run = try ImgFetchRunner.runShell(script)
        XCTAssertEqual(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "130", run.stderr)
        let lines = try String(contentsOfFile: scratch.file("stdout").path, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        // Row 2 was written into shard 1 before the interrupt, but the shard was not completed.
        XCTAssertEqual(lines.map { $0[0] }, ["saved", "saved", "cancelled", "cancelled"], "the first shard is complete, the second was cut short")
        XCTAssertEqual(try outputFiles(), ["000000.jsonl", "000000.tar", "000000_stats.json", "stats.json"], "nothing of shard 1, not even a temp file")
        XCTAssertTrue(run.stderr.contains("shard \(outputDirectory)/000001.tar was cut short and is not written; run again to complete it"), run.stderr)
    }
}
