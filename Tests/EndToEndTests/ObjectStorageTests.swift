import Foundation
import XCTest

/// `-o s3://BUCKET/PREFIX` against a real S3-compatible server (moto, checking every request's
/// signature), read back with boto3: an item is saved only once its PUT returned 200, uploads are
/// retried as downloads are, a shard's stats object goes up last, and a re-run downloads nothing
/// the store has.
final class ObjectStorageTests: EndToEndTestCase {
    private var store: S3TestStore!
    private var images: [String] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try S3TestStore()
        images = try server.addSamples(count: 2, seed: 11)  // two PNGs and two JPEGs
    }

    override func tearDown() {
        store?.stop()
        super.tearDown()
    }

    private var workDirectory: String { scratch.file("work").path }

    private func run(_ list: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Execution {
        try ImgFetchRunner.run([list, "--work-dir", workDirectory, "--jsonl"] + arguments, environment: environment ?? store.environment)
    }

    /// A CSV with one column, `url`, of the four sample images.
    private func writeURLTable() throws -> String {
        try scratch.write("table.csv", (["url"] + images.map { server.url("/files/" + $0) }).joined(separator: "\n") + "\n")
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// Image responses that carried a body (a revalidation's 304 carries none; the 404 of missing.jpg is no image).
    private func imageDownloads() throws -> Int {
        try server.sentBodies().filter { $0.path.hasPrefix("/files/") && $0.path != "/files/missing.jpg" && $0.bytes > 0 }.count
    }

    func testFilesAreSavedOnlyOnceTheStoreHasThemAndAReRunDownloadsNothing() throws {
        let list = try scratch.write("urls.txt", (images.map { server.url("/files/" + $0) } + [server.url("/files/missing.jpg")])
            .joined(separator: "\n") + "\n")
        // The first image's PUT fails twice (retried), the second's every time.
        try store.failRequests([("PUT", images[0], 2), ("PUT", images[1], -1)])
        let first = try run(list, ["-o", "s3://pics/run1", "--retries", "2"])
        XCTAssertEqual(first.exitCode, 1, first.stderr)
        let results = try jsonLines(first.stdout)
        XCTAssertEqual(results.count, 5)
        func result(_ name: String) -> [String: Any]? { results.first { ($0["url"] as? String)?.hasSuffix("/" + name) == true } }
        for name in [images[0], images[2], images[3]] {
            XCTAssertEqual(result(name)?["status"] as? String, "saved", name)
            XCTAssertEqual(result(name)?["paths"] as? [String], ["s3://pics/run1/" + name])
        }
        let refused = try XCTUnwrap(result(images[1]))
        XCTAssertEqual(refused["status"] as? String, "failed")
        let error = try XCTUnwrap(refused["error"] as? [String: Any])
        XCTAssertEqual(error["class"] as? String, "storage")
        let message = try XCTUnwrap(error["message"] as? String)
        XCTAssertTrue(message.contains("PUT s3://pics/run1/\(images[1]): HTTP 503 SlowDown") && message.contains("after 3 attempts"), message)
        XCTAssertEqual(try store.requests().filter { $0.method == "PUT" && $0.key == "run1/" + images[0] }.map(\.status), [503, 503, 200])
        XCTAssertTrue(first.stderr.contains("; 3 uploaded"), "the summary counts the uploads: \(first.stderr)")

        // What the store holds is exactly what was reported saved, byte for byte, typed.
        var objects = try store.objects(prefix: "run1/")
        XCTAssertEqual(Set(objects.keys), Set([images[0], images[2], images[3]].map { "run1/" + $0 }))
        for name in [images[0], images[2], images[3]] {
            let object = try XCTUnwrap(objects["run1/" + name])
            XCTAssertEqual(object.sha256, sha256Hex(try server.fileData(name)), name)
            XCTAssertEqual(object.contentType, name.hasSuffix(".png") ? "image/png" : "image/jpeg")
        }

        // A re-run downloads nothing: the failed upload goes up from the work directory, the rest is checked with a HEAD.
        store.clearFaults()
        let requestsBefore = try imageDownloads()
        let storeBefore = try store.requests().count
        let second = try run(list, ["-o", "s3://pics/run1"])
        XCTAssertEqual(second.exitCode, 1, "the 404 still fails: \(second.stderr)")
        XCTAssertEqual(try imageDownloads(), requestsBefore, "no image is downloaded again")
        let again = try jsonLines(second.stdout)
        for name in images {
            let line = try XCTUnwrap(again.first { ($0["url"] as? String)?.hasSuffix("/" + name) == true })
            XCTAssertEqual(line["status"] as? String, "skipped", name)
            XCTAssertEqual(line["paths"] as? [String], ["s3://pics/run1/" + name])
        }
        let secondRequests = try store.requests().dropFirst(storeBefore)
        XCTAssertEqual(secondRequests.filter { $0.method == "PUT" }.map(\.key), ["run1/" + images[1]])
        XCTAssertTrue(second.stderr.contains("0 saved, 4 skipped, 1 failed (1 http); ") && second.stderr.contains("; 1 uploaded"),
                      "the summary says what went up: \(second.stderr)")
        XCTAssertEqual(secondRequests.filter { $0.method == "HEAD" && !$0.key.isEmpty }.count, 4, "one HEAD an object (and one of the bucket)")
        objects = try store.objects(prefix: "run1/")
        XCTAssertEqual(objects["run1/" + images[1]]?.sha256, sha256Hex(try server.fileData(images[1])))

        // An object removed from the store is put again, still without a download; so is one whose
        // HEAD the store refuses (AWS answers 403 for a missing object to keys without s3:ListBucket).
        try store.delete("run1/" + images[2])
        let third = try run(list, ["-o", "s3://pics/run1"])
        XCTAssertEqual(try imageDownloads(), requestsBefore, third.stderr)
        XCTAssertEqual(try store.objects(prefix: "run1/")["run1/" + images[2]]?.sha256, sha256Hex(try server.fileData(images[2])))
        try store.delete("run1/" + images[3])
        try store.failRequests([("HEAD", "", -1)], status: 403)
        let fourth = try run(list, ["-o", "s3://pics/run1"])
        XCTAssertEqual(try imageDownloads(), requestsBefore, fourth.stderr)
        XCTAssertEqual(try store.objects(prefix: "run1/")["run1/" + images[3]]?.sha256, sha256Hex(try server.fileData(images[3])))
        XCTAssertEqual(try jsonLines(fourth.stdout).filter { $0["status"] as? String == "skipped" }.count, 4, fourth.stderr)
    }

    func testAWrongSecretStopsTheRunBeforeAnyDownload() throws {
        let list = try scratch.write("urls.txt", images.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        var environment = store.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let run = try run(list, ["-o", "s3://pics/run2"], environment: environment)
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("s3://pics/run2: the store refuses a first write, so nothing is downloaded: "
                                          + "PUT s3://pics/run2/.imgfetch-write-check: HTTP 403 SignatureDoesNotMatch"), run.stderr)
        XCTAssertTrue(run.stderr.contains("check the keys from the environment (AWS_ACCESS_KEY_ID)"), run.stderr)
        XCTAssertEqual(try imageDownloads(), 0)
        XCTAssertEqual(try store.requests(withWriteChecks: true).filter { $0.method == "PUT" }.count, 1, "a refusal is not retried")
        // A worker too: the same keys would be refused again, so the task is not worth a retry.
        let worker = try ImgFetchRunner.run(["-", "--work-dir", scratch.file("work2").path, "-o", "s3://pics/run2", "--failures-are-data"],
                                            stdin: images.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n",
                                            environment: environment)
        XCTAssertEqual(worker.exitCode, 2, worker.stderr)
        XCTAssertEqual(try imageDownloads(), 0)
    }

    func testAStoreThatRefusesWritesMidRunStopsTheDownloadsAtOnce() throws {
        // The write check passes; then the store refuses every image (a bucket policy that allows
        // only some keys, or keys whose rights were taken away during the run).
        let many = try server.addSamples(count: 10, seed: 31)
        let list = try scratch.write("many.txt", many.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        try store.answerRequests(method: "PUT", suffix: "g", times: -1, status: 403,
                                 body: "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>")
        let run = try run(list, ["-o", "s3://pics/denied", "-j", "2"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.count, many.count)
        XCTAssertEqual(Set(results.compactMap { ($0["error"] as? [String: Any])?["class"] as? String }), ["storage"])
        let stops = run.stderr.split(separator: "\n").filter { $0.contains("stopping:") }
        XCTAssertEqual(stops.count, 1, run.stderr)
        XCTAssertTrue(stops.first?.contains("the store refuses this run's writes (PUT s3://pics/denied/") == true, run.stderr)
        XCTAssertTrue(stops.first?.contains("HTTP 403 AccessDenied: Access Denied") == true, run.stderr)
        // What was downloaded is bounded by what was in flight when the first refusal came; the
        // rest failed without a request.
        let downloads = try imageDownloads()
        XCTAssertLessThanOrEqual(downloads, 2 * 2 + 2, "downloads: \(downloads)")
        XCTAssertLessThan(downloads, many.count)
        let message = results.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
        XCTAssertTrue(message.contains { $0.hasPrefix("not uploaded: the store refuses this run's writes") }, "\(message)")
        // A worker exits 75, as for a full disk: its engine runs the task again, perhaps elsewhere.
        let worker = try ImgFetchRunner.run([list, "--work-dir", scratch.file("work3").path, "-o", "s3://pics/denied", "--failures-are-data",
                                             "-j", "2"], environment: store.environment)
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
    }

    func testAStoreThatFailsRequestsInARowStopsTheRun() throws {
        // Every image's PUT answered 503 until its retries are spent: a store that is down.
        let many = try server.addSamples(count: 20, seed: 37)
        let list = try scratch.write("many.txt", many.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        try store.failRequests([("PUT", "g", -1)])
        let started = Date()
        let run = try run(list, ["-o", "s3://pics/down", "--retries", "1", "-j", "8"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("stopping: the store failed 5 requests in a row (the last: PUT s3://pics/down/"), run.stderr)
        let puts = try store.requests().filter { $0.method == "PUT" }.count
        // Two attempts each for the five failures and for the uploads in flight then (4 upload
        // threads at -j 8); the items after the stop made no request.
        XCTAssertLessThanOrEqual(puts, 2 * (5 + 4), "\(puts) PUTs")
        XCTAssertEqual(try jsonLines(run.stdout).count, many.count)
    }

    func testAStoreThatDiesMidRunEndsTheRunWithinThirtySeconds() throws {
        // Uploads go slowly (each PUT waits half a second at the proxy), and the store is killed
        // once three are in: every later request finds no store.
        let many = try server.addSamples(count: 20, seed: 41)
        let list = try scratch.write("many.txt", many.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        try store.delayRequests(method: "PUT", suffix: "g", delay: 0.5)
        let environment = store.environment.map { "\($0.key)=\($0.value)" }
        let running = try RunningImgFetch(["-i"] + environment + [ImgFetchRunner.binary.path, list, "-o", "s3://pics/dies",
                                                                 "--work-dir", workDirectory, "--jsonl", "-j", "4"],
                                          executable: URL(fileURLWithPath: "/usr/bin/env"))
        XCTAssertTrue(try eventually(timeout: 30) { try store.requests().filter { $0.method == "PUT" && $0.status == 200 }.count >= 3 })
        store.kill()
        let died = Date()
        let run = try running.wait(timeout: 90)
        let took = Date().timeIntervalSince(died)
        XCTAssertLessThan(took, 30, "the run went on for \(took) s after the store died")
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("stopping: the store failed 5 requests in a row"), run.stderr)
        let lines = try jsonLines(run.stdout)
        XCTAssertEqual(lines.count, many.count, "every item has its result line")
        XCTAssertGreaterThanOrEqual(lines.filter { $0["status"] as? String == "saved" }.count, 3)
        print("a store killed mid-run: the run ended \(String(format: "%.1f", took)) s later")
    }

    func testAStoreThatSlowedDownAndCameBackTakesTheLaterUploads() throws {
        // Two rounds of 503 SlowDown for the four PUTs: two slow-downs in a row, which the image
        // hosts' breaker takes as "give up" with --host-failures 2. The store's host has no breaker
        // (only the pauses), so the third round is sent, and every file goes up.
        let list = try scratch.write("urls.txt", images.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        try store.failRequests([("PUT", ".jpg", 4), ("PUT", ".png", 4)])
        let run = try run(list, ["-o", "s3://pics/slow", "--retries", "4", "--host-failures", "2"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try jsonLines(run.stdout).map { $0["status"] as? String }, Array(repeating: "saved", count: 4), run.stdout)
        XCTAssertEqual(try store.objects(prefix: "slow/").count, 4)
        let puts = try store.requests().filter { $0.method == "PUT" }.map(\.status)
        XCTAssertEqual(puts.filter { $0 == 503 }.count, 8)
        XCTAssertEqual(puts.filter { $0 == 200 }.count, 4)
    }

    func testAFullWorkDirectoryStopsTheDownloadsButNotTheUploadsOfWhatWasSaved() throws {
        // --min-free trips once the work directory has filled past 20 MiB of 30: the downloads
        // stop, and every file already placed still goes up (the uploads run on the engine, and a
        // full disk cancels only its downloads).
        let disk = try SmallDisk(in: scratch, name: "small-work", size: "30m")
        defer { disk.unmount() }
        var body = Data([0xFF, 0xD8, 0xFF, 0xE0])
        var generator = SystemRandomNumberGenerator()
        body.append(contentsOf: (0..<59_996).map { _ in UInt8.random(in: 0...255, using: &generator) })
        _ = try server.addFile("noise.jpg", body)
        let list = try scratch.write("noise.txt", (0..<400).map { server.url("/files/noise.jpg?\($0)") }.joined(separator: "\n") + "\n")
        let run = try ImgFetchRunner.run([list, "--work-dir", disk.path, "--jsonl", "-o", "s3://pics/full", "--no-decode",
                                          "-j", "8", "--min-free", "20M"], environment: store.environment)
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.count, 400)
        let statuses = Dictionary(grouping: results, by: { $0["status"] as? String ?? "?" }).mapValues(\.count)
        XCTAssertNil(statuses["cancelled"], "no upload was cancelled: \(statuses)")
        let saved = results.filter { $0["status"] as? String == "saved" }
        XCTAssertGreaterThan(saved.count, 0, run.stderr)
        XCTAssertGreaterThan(statuses["failed"] ?? 0, 0, "the disk filled: \(statuses)")
        for result in saved { XCTAssertTrue((result["paths"] as? [String])?.first?.hasPrefix("s3://pics/full/") == true, "\(result)") }
        XCTAssertEqual(try store.objects(prefix: "full/").count, saved.count)
    }

    func testAnUnreachableStoreStopsTheRunBeforeAnyDownload() throws {
        let list = try scratch.write("urls.txt", server.url("/files/" + images[0]) + "\n")
        var environment = store.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(try Self.closedPort())"
        let run = try run(list, ["-o", "s3://pics/run3", "--retries", "1"], environment: environment)
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("s3://pics/run3: the store did not take a first write, so nothing is downloaded: "
                                          + "PUT s3://pics/run3/.imgfetch-write-check failed: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("(after 2 attempts)"), run.stderr)
        XCTAssertEqual(try imageDownloads(), 0)
        // A worker exits 75: the store may be back when the task runs again.
        let worker = try self.run(list, ["-o", "s3://pics/run3", "--retries", "0", "--failures-are-data"], environment: environment)
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
    }

    /// A loopback port nothing listens on: bound, then closed.
    private static func closedPort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        guard bound else { throw TestServerError.didNotStart("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func testShardsGoUpWholeWithTheStatsObjectLastAndAReRunSkipsThem() throws {
        var rows = ["id,url"]
        for (i, name) in images.enumerated() { rows.append("s\(i),\(server.url("/files/" + name))") }
        rows.append("gone,\(server.url("/files/missing.jpg"))")
        let table = try scratch.write("table.csv", rows.joined(separator: "\n") + "\n")
        let arguments = ["-o", "s3://pics/ds", "--input-format", "csv", "--output-format", "webdataset", "--shard-samples", "2",
                         "--key-column", "id"]
        let first = try run(table, arguments)
        XCTAssertEqual(first.exitCode, 1, first.stderr)
        let results = try jsonLines(first.stdout)
        XCTAssertEqual(results.filter { $0["status"] as? String == "saved" }.count, 4)
        XCTAssertEqual(results.first { $0["status"] as? String == "saved" }?["paths"] as? [String], ["s3://pics/ds/000000.tar"])

        // Each shard: the tar, the results, and the stats last; nothing is deleted.
        let requests = try store.requests()
        for shard in ["000000", "000001", "000002"] {
            let mine = requests.filter { $0.key.hasPrefix("ds/" + shard) && $0.method != "GET" }
            XCTAssertEqual(mine.map { "\($0.method) \($0.key)" }, ["PUT ds/\(shard).tar", "PUT ds/\(shard).jsonl", "PUT ds/\(shard)_stats.json"])
        }
        let objects = try store.objects(prefix: "ds/")
        XCTAssertEqual(Set(objects.keys), Set(["000000", "000001", "000002"].flatMap { ["ds/\($0).tar", "ds/\($0).jsonl", "ds/\($0)_stats.json"] }
            + ["ds/stats.json"]))
        // The dataset's stats, put after each shard, sum the three.
        let total = try XCTUnwrap(JSONSerialization.jsonObject(with: try store.data("ds/stats.json")) as? [String: Any])
        XCTAssertEqual(total["shards"] as? Int, 3)
        XCTAssertEqual(total["successes"] as? Int, 4)
        XCTAssertEqual(total["count"] as? Int, results.count)
        XCTAssertEqual(objects["ds/000000.tar"]?.contentType, "application/x-tar")
        // The stats object names the tar's size and the ETag the store gave it.
        let stats = try XCTUnwrap(JSONSerialization.jsonObject(with: try store.data("ds/000001_stats.json")) as? [String: Any])
        XCTAssertEqual(stats["tar_bytes"] as? Int, objects["ds/000001.tar"]?.size)
        XCTAssertEqual(stats["tar_etag"] as? String, objects["ds/000001.tar"]?.etag)
        XCTAssertNotNil(stats["tar_etag"])
        // The tar read back holds each sample's image, byte for byte, and its record.
        let tar = scratch.file("000000.tar")
        try store.data("ds/000000.tar").write(to: tar)
        let listing = try ImgFetchRunner.runShell("tar -tf '\(tar.path)'")
        let ext = { (name: String) in name.hasSuffix(".png") ? "png" : "jpg" }
        XCTAssertEqual(listing.stdout.split(separator: "\n").map(String.init), ["s0.\(ext(images[0]))", "s0.json", "s1.\(ext(images[1]))", "s1.json"])
        let member = try ImgFetchRunner.runShell("tar -xOf '\(tar.path)' s1.\(ext(images[1])) | sha256sum")
        XCTAssertEqual(member.stdout.prefix(64), sha256Hex(try server.fileData(images[1])).prefix(64))
        // Nothing is left in the work directory but its index folder.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDirectory).filter { $0 != ".imgfetch" }, [])

        // A re-run reads the shards back from the store and asks for no image.
        let before = try imageDownloads()
        let storeBefore = try store.requests().count
        let second = try run(table, arguments)
        XCTAssertEqual(second.exitCode, 1, second.stderr)
        XCTAssertEqual(try imageDownloads(), before)
        let again = try jsonLines(second.stdout)
        XCTAssertEqual(again.filter { $0["status"] as? String == "skipped" }.count, 4)
        XCTAssertEqual(again.first { $0["status"] as? String == "skipped" }?["paths"] as? [String], ["s3://pics/ds/000000.tar"])
        XCTAssertEqual(try store.requests().dropFirst(storeBefore).filter { $0.method != "GET" && $0.method != "HEAD" }, [])

        // A shard whose stats object is gone is fetched and put again; the others are not.
        try store.delete("ds/000001_stats.json")
        let third = try run(table, arguments)
        XCTAssertEqual(third.exitCode, 1, third.stderr)
        XCTAssertEqual(try imageDownloads() - before, 2, "the two images of shard 000001")
        XCTAssertNotNil(try store.objects(prefix: "ds/000001_stats.json")["ds/000001_stats.json"])

        // A tar replaced since (another run's, cut short after its tar), even of the same size: its
        // stats object no longer vouches for it, and the shard is made again.
        var replaced = try store.data("ds/000000.tar")
        replaced[replaced.count / 2] ^= 0xFF
        try store.put("ds/000000.tar", replaced)
        let fourth = try run(table, arguments)
        XCTAssertEqual(fourth.exitCode, 1, fourth.stderr)
        XCTAssertEqual(try imageDownloads() - before, 4, "the two images of shard 000000 too")
        XCTAssertNotEqual(try store.data("ds/000000.tar"), replaced)

        // Results replaced since (a second attempt of the shard, interleaved): the stats object
        // names the results' ETag too, so the shard is made again.
        var otherResults = try store.data("ds/000002.jsonl")
        otherResults.append(contentsOf: Data(" ".utf8))
        try store.put("ds/000002.jsonl", otherResults)
        let fifth = try run(table, arguments)
        XCTAssertEqual(fifth.exitCode, 1, fifth.stderr)
        XCTAssertEqual(try imageDownloads() - before, 4, "shard 000002 holds only the 404: no image to fetch")
        XCTAssertNotEqual(try store.data("ds/000002.jsonl"), otherResults, "the results were put again")
    }

    func testAShardThatCannotBeUploadedFailsItsRowsAndLeavesNoStatsObject() throws {
        let table = try writeURLTable()
        try store.failRequests([("PUT", "000001.tar", -1)], status: 500)
        let run = try run(table, ["-o", "s3://pics/broken", "--input-format", "csv", "--output-format", "webdataset",
                                  "--shard-samples", "2", "--retries", "1", "--failures-are-data"])
        XCTAssertEqual(run.exitCode, 75, "a shard not uploaded is worth a retry: \(run.stderr)")
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.map { $0["status"] as? String }, ["saved", "saved", "failed", "failed"])
        let error = try XCTUnwrap(results[2]["error"] as? [String: Any])
        XCTAssertEqual(error["class"] as? String, "storage")
        XCTAssertTrue((error["message"] as? String ?? "").contains("shard s3://pics/broken/000001.tar not uploaded"), "\(error)")
        XCTAssertEqual(Set(try store.objects(prefix: "broken/").keys),
                       Set(["broken/000000.tar", "broken/000000.jsonl", "broken/000000_stats.json", "broken/stats.json"]))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDirectory).filter { $0 != ".imgfetch" }, [])
    }

    func testAShardTheStoreRefusesStopsADatasetRun() throws {
        // 40 rows in shards of 2; the store refuses the first tar: the run stops, and the rows
        // not yet fetched fail without a request instead of being downloaded for nothing.
        let many = try server.addSamples(count: 20, seed: 41)
        let table = try scratch.write("many.csv", (["url"] + many.map { server.url("/files/" + $0) }).joined(separator: "\n") + "\n")
        try store.answerRequests(method: "PUT", suffix: ".tar", times: -1, status: 403,
                                 body: "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>")
        let run = try run(table, ["-o", "s3://pics/dsdenied", "--input-format", "csv", "--output-format", "webdataset",
                                  "--shard-samples", "2", "-j", "2"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let results = try jsonLines(run.stdout)
        XCTAssertEqual(results.count, many.count)
        XCTAssertEqual(Set(results.compactMap { ($0["error"] as? [String: Any])?["class"] as? String }), ["storage"])
        XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.contains("stopping: the store refuses this run's writes") }.count, 1,
                       run.stderr)
        XCTAssertLessThan(try imageDownloads(), many.count / 2, "downloads after the refusal")
        XCTAssertEqual(try store.requests().filter { $0.method == "PUT" && $0.key.hasSuffix(".tar") }.count, 1)
    }

    func testTheNextShardIsWrittenWhileAShardGoesUp() throws {
        let table = try writeURLTable()
        // Shard 000000's tar hangs for 6 s, then is refused once (and put again).
        try store.answerRequests(method: "PUT", suffix: "000000.tar", times: 1, status: 503, delay: 6)
        let environment = store.environment.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        let script = "env -i \(environment) '\(ImgFetchRunner.binary.path)' '\(table)' -o s3://pics/piped --work-dir '\(workDirectory)' "
            + "--input-format csv --output-format webdataset --shard-samples 2 > '\(scratch.file("stdout").path)' & pid=$!; "
            + "for i in $(seq 50); do ls -a '\(workDirectory)' | grep -q 000001 && { echo seen; break; }; sleep 0.1; done; "
            + "wait $pid; echo \"exit $?\""
        let run = try ImgFetchRunner.runShell(script)
        XCTAssertTrue(run.stdout.contains("seen"), "shard 000001 is written while shard 000000 is stuck: \(run.stdout)")
        XCTAssertTrue(run.stdout.contains("exit 0"), run.stdout + run.stderr)
        // The shards still go up one after the other, each whole.
        let puts = try store.requests().filter { $0.method == "PUT" && $0.key.hasSuffix(".tar") }.map { "\($0.key) \($0.status)" }
        XCTAssertEqual(puts, ["piped/000000.tar 503", "piped/000000.tar 200", "piped/000001.tar 200"])
        let lines = try String(contentsOfFile: scratch.file("stdout").path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.map { $0.split(separator: "\t")[0] }, Array(repeating: "saved", count: 4))
    }

    func testObjectStorageIsCheckedBeforeTheRunStarts() throws {
        let list = try scratch.write("urls.txt", server.url("/files/" + images[0]) + "\n")
        let cases: [([String], [String: String], String)] = [
            (["-o", "s3://pics/x"], ["PATH": "/usr/bin:/bin", "AWS_EC2_METADATA_DISABLED": "true"].merging(S3TestStore.noSharedFiles) { $1 },
             "s3://pics/x: no AWS credentials: tried environment (no AWS_ACCESS_KEY_ID)"),
            (["-o", "gs://pics/x"], store.environment, "only s3:// object storage is supported"),
            (["-o", "s3://Pics/x"], store.environment, "lowercase letters"),
            (["-o", "s3://pics/a//b"], store.environment, "empty, '.' or '..' segment"),
            (["-o", "s3://pics/x", "--gallery", "g.html"], store.environment, "the page links to local files"),
            (["-o", "s3://pics/x"], store.environment.merging(["AWS_ENDPOINT_URL": "ftp://x"]) { $1 }, "is not an http:// or https:// URL"),
            (["-o", "s3://no-such-bucket/x"], store.environment, "s3://no-such-bucket/x: no such bucket at \(store.endpoint)"),
            (["-o", "s3://no-such-bucket/x", "--failures-are-data"], store.environment, "no such bucket"),
        ]
        defer { store.clearFaults() }
        for (arguments, environment, expected) in cases {
            let run = try ImgFetchRunner.run([list] + arguments, environment: environment)
            XCTAssertEqual(run.exitCode, 2, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(expected), "\(arguments): \(run.stderr)")
        }
        // A bucket in another region: S3 answers its HEAD 301 and names the region.
        try store.answerRequests(method: "HEAD", suffix: "", times: -1, status: 301, headers: ["x-amz-bucket-region": "eu-west-1"])
        let elsewhere = try ImgFetchRunner.run([list, "-o", "s3://pics/x"], environment: store.environment)
        XCTAssertEqual(elsewhere.exitCode, 2, elsewhere.stderr)
        XCTAssertTrue(elsewhere.stderr.contains("s3://pics/x: the bucket is in region eu-west-1, not us-east-1 (set AWS_REGION=eu-west-1)"),
                      elsewhere.stderr)
        XCTAssertEqual(try imageDownloads(), 0)
    }

    func testKeysWithReservedCharactersArriveAsNamed() throws {
        // moto's signature check (boto3's requests too) fails on '=', '+' and non-ASCII keys, which
        // AWS signs as encoded here: this store checks none.
        store.stop()
        store = try S3TestStore(auth: false)
        let names = ["a=b.jpg", "c+d.jpg", "é.jpg", "(1)~[2]&$.jpg"]
        let data = try server.fileData(images.first { $0.hasSuffix(".jpg") }!)
        for (i, _) in names.enumerated() { try server.addFile("k\(i).jpg", data) }
        let list = try scratch.write("urls.txt", names.enumerated().map { "\(server.url("/files/k\($0.offset).jpg")) out=\($0.element)" }
            .joined(separator: "\n") + "\n")
        let run = try run(list, ["-o", "s3://pics/odd names"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(Set(try store.objects(prefix: "odd names/").keys), Set(names.map { "odd names/" + $0 }))
        // The proxy still checks each signature as AWS does (the path decoded, then encoded once):
        // every PUT passed it, and a wrong secret does not.
        XCTAssertEqual(try store.requests().filter { $0.method == "PUT" }.map(\.status), [200, 200, 200, 200])
        var wrong = store.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let refused = try self.run(list, ["-o", "s3://pics/odd names 2"], environment: wrong)
        XCTAssertTrue(refused.stderr.contains("HTTP 403 SignatureDoesNotMatch"), refused.stderr)
    }

    func testAnHTTPSStoreIsCheckedAgainstAWSCABundle() throws {
        let certificate = try SelfSignedCertificate.shared.get()
        store.stop()
        store = try S3TestStore(tls: certificate)
        let list = try scratch.write("urls.txt", server.url("/files/" + images[0]) + "\n")
        XCTAssertTrue(store.endpoint.hasPrefix("https://"))
        // Without the CA, the store's certificate is refused by the write check, before any download.
        let untrusted = try run(list, ["-o", "s3://pics/tls", "--retries", "0"])
        XCTAssertEqual(untrusted.exitCode, 2)
        XCTAssertTrue(untrusted.stderr.contains("PUT s3://pics/tls/.imgfetch-write-check failed: SSL certificate problem"), untrusted.stderr)
        let trusted = try run(list, ["-o", "s3://pics/tls"], environment: store.environment.merging(["AWS_CA_BUNDLE": certificate.certificateFile]) { $1 })
        XCTAssertEqual(trusted.exitCode, 0, trusted.stderr)
        XCTAssertEqual(try store.objects(prefix: "tls/")["tls/" + images[0]]?.sha256, sha256Hex(try server.fileData(images[0])))
        let missing = try run(list, ["-o", "s3://pics/tls"], environment: store.environment.merging(["AWS_CA_BUNDLE": "/nonexistent.pem"]) { $1 })
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("AWS_CA_BUNDLE '/nonexistent.pem' cannot be read"), missing.stderr)
    }

    func testAShardLargerThanThePartSizeGoesUpInPartsAndAFailedCompletionIsAborted() throws {
        let table = try writeURLTable()
        let arguments = ["--input-format", "csv", "--output-format", "webdataset", "--shard-samples", "4"]
        var environment = store.environment
        environment["IMGFETCH_S3_PART_SIZE"] = "20000"
        // The first part's PUT fails once (retried), as a store's 503 may.
        try store.failRequests([("PUT", "000000.tar", 1)])
        let first = try run(table, ["-o", "s3://pics/parts"] + arguments, environment: environment)
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        let requests = try store.requests().filter { $0.key == "parts/000000.tar" }
        let parts = requests.filter { $0.method == "PUT" && $0.status == 200 }
        XCTAssertGreaterThanOrEqual(parts.count, 3, "\(requests.map(\.query))")
        XCTAssertEqual(requests.first?.method, "POST")
        XCTAssertEqual(requests.first?.query, "uploads=")
        XCTAssertEqual(requests.filter { $0.method == "PUT" }.first?.status, 503)
        XCTAssertEqual(parts.map { $0.query.components(separatedBy: "&")[0] }, (1...parts.count).map { "partNumber=\($0)" })
        XCTAssertEqual(requests.last?.method, "POST")
        XCTAssertTrue(requests.last?.query.hasPrefix("uploadId=") == true)
        // The object is whole: its members read back, and its stats object names its (multipart) ETag.
        let objects = try store.objects(prefix: "parts/")
        let tar = scratch.file("parts.tar")
        try store.data("parts/000000.tar").write(to: tar)
        let listing = try ImgFetchRunner.runShell("tar -tf '\(tar.path)' | grep -c json")
        XCTAssertEqual(listing.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "4")
        let stats = try XCTUnwrap(JSONSerialization.jsonObject(with: try store.data("parts/000000_stats.json")) as? [String: Any])
        XCTAssertEqual(stats["tar_etag"] as? String, objects["parts/000000.tar"]?.etag)
        XCTAssertTrue((objects["parts/000000.tar"]?.etag ?? "").contains("-"), "a multipart ETag")
        let again = try run(table, ["-o", "s3://pics/parts"] + arguments, environment: environment)
        XCTAssertEqual(try jsonLines(again.stdout).filter { $0["status"] as? String == "skipped" }.count, 4, again.stderr)

        // A completion the store keeps refusing: the upload is aborted (its parts go), the rows
        // fail, and no object is left.
        try store.failRequests([("POST", "000000.tar", -1)], status: 500, query: "uploadId")
        let broken = try run(table, ["-o", "s3://pics/aborted", "--retries", "0"] + arguments, environment: environment)
        XCTAssertEqual(broken.exitCode, 1)
        XCTAssertEqual(try jsonLines(broken.stdout).compactMap { ($0["error"] as? [String: Any])?["class"] as? String },
                       Array(repeating: "storage", count: 4))
        XCTAssertEqual(try store.objects(prefix: "aborted/").count, 0)
        let aborted = try store.requests().filter { $0.key == "aborted/000000.tar" }
        XCTAssertEqual(aborted.last?.method, "DELETE")
        XCTAssertTrue(aborted.last?.query.hasPrefix("uploadId=") == true, "\(aborted)")
        XCTAssertEqual(aborted.last?.status, 204)

        // A completion answered 200 whose body, after keep-alive spaces, is an error (S3 and MinIO
        // do this): not taken for success, but retried.
        try store.answerRequests(method: "POST", suffix: "000000.tar", query: "uploadId", times: 1, status: 200,
                                 body: "   \n  <Error><Code>InternalError</Code><Message>try again</Message></Error>")
        let spaced = try run(table, ["-o", "s3://pics/spaced"] + arguments, environment: environment)
        XCTAssertEqual(spaced.exitCode, 0, spaced.stderr)
        XCTAssertEqual(try store.requests().filter { $0.key == "spaced/000000.tar" && $0.query.hasPrefix("uploadId=") && $0.method == "POST" }
            .map(\.status), [200, 200])
        XCTAssertNotNil(try store.objects(prefix: "spaced/")["spaced/000000.tar"])

        let refused = try run(table, ["-o", "s3://pics/x"] + arguments, environment: environment.merging(["IMGFETCH_S3_PART_SIZE": "12"]) { $1 })
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("IMGFETCH_S3_PART_SIZE '12' is not a number of bytes"), refused.stderr)
    }

    func testAnInterruptedMultipartUploadIsAbortedAndTheRunEndsAt130() throws {
        let table = try writeURLTable()
        // The second part hangs; Ctrl-C comes while it does.
        try store.answerRequests(method: "PUT", suffix: "000000.tar", query: "partNumber=2", times: 1, status: 503, delay: 20)
        let environment = store.environment.merging(["IMGFETCH_S3_PART_SIZE": "20000"]) { $1 }
            .map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        let script = "env -i \(environment) '\(ImgFetchRunner.binary.path)' '\(table)' -o s3://pics/cut --work-dir '\(workDirectory)' "
            + "--input-format csv --output-format webdataset --shard-samples 4 > '\(scratch.file("stdout").path)' & pid=$!; "
            + "sleep 3; kill -INT $pid; start=$(date +%s); wait $pid; echo \"$? $(( $(date +%s) - start ))\""
        let run = try ImgFetchRunner.runShell(script)
        let words = run.stdout.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(words.first, "130", run.stderr)
        XCTAssertLessThanOrEqual(Int(words.last ?? "") ?? 99, 5, "the hanging part does not hold the run up")
        let requests = try store.requests().filter { $0.key == "cut/000000.tar" }
        XCTAssertEqual(requests.last?.method, "DELETE", "\(requests)")
        XCTAssertTrue(requests.last?.query.hasPrefix("uploadId=") == true)
        XCTAssertEqual(requests.last?.status, 204)
        XCTAssertEqual(try store.objects(prefix: "cut/").count, 0)
        let lines = try String(contentsOfFile: scratch.file("stdout").path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.map { $0.split(separator: "\t")[0] }, Array(repeating: "cancelled", count: 4))
    }

    func testAMultipartUploadOfARunKilledMidwayIsAbortedByTheNextRunAndOthersAreLeftAlone() throws {
        let table = try writeURLTable()
        // Another program's upload under the same prefix, in progress: not imgfetch's to abort.
        let others = try store.startUpload("killed/other.bin")
        // The second part hangs, and the run is killed with SIGKILL while it does.
        try store.answerRequests(method: "PUT", suffix: "000000.tar", query: "partNumber=2", times: 1, status: 503, delay: 30)
        let environment = store.environment.merging(["IMGFETCH_S3_PART_SIZE": "20000"]) { $1 }
        let shell = environment.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        let log = scratch.file("killed.log").path
        let script = "env -i \(shell) '\(ImgFetchRunner.binary.path)' '\(table)' -o s3://pics/killed --work-dir '\(workDirectory)' "
            + "--input-format csv --output-format webdataset --shard-samples 4 > /dev/null 2>'\(log)' & pid=$!; "
            + "for i in $(seq 100); do sleep 0.1; grep -q partNumber=2 '\(store.logPath)' 2>/dev/null && break; done; "
            + "kill -KILL $pid; wait $pid; echo $?"
        let killed = try ImgFetchRunner.runShell(script)
        XCTAssertEqual(killed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "137", killed.stderr)
        let created = try XCTUnwrap(try store.requests().first { $0.key == "killed/000000.tar" && $0.query == "uploads=" })
        XCTAssertEqual(created.status, 200)
        let left = try store.incompleteUploads(prefix: "killed/")
        XCTAssertEqual(Set(left.map(\.key)), ["killed/000000.tar", "killed/other.bin"], "the killed run's upload is left in progress")
        let orphan = try XCTUnwrap(left.first { $0.key == "killed/000000.tar" })

        store.clearFaults()
        let rerun = try run(table, ["-o", "s3://pics/killed", "--input-format", "csv", "--output-format", "webdataset", "--shard-samples", "4"],
                            environment: environment)
        XCTAssertEqual(rerun.exitCode, 0, rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("aborted 1 multipart upload an earlier run left unfinished: s3://pics/killed/000000.tar"),
                      rerun.stderr)
        // Its own upload is gone (aborted by its ID), the other program's is not, and the shard is whole.
        XCTAssertEqual(try store.incompleteUploads(prefix: "killed/"), [others])
        let deletes = try store.requests().filter { $0.method == "DELETE" && $0.key == "killed/000000.tar" }
        XCTAssertEqual(deletes.map(\.status), [204], "\(deletes)")
        XCTAssertEqual(deletes.first?.query.removingPercentEncoding, "uploadId=" + orphan.uploadID)
        let shard = try XCTUnwrap(try store.objects(prefix: "killed/")["killed/000000.tar"])
        XCTAssertEqual(shard.metadata["made-by"], "imgfetch", "multipart uploads carry imgfetch's mark")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDirectory + "/.imgfetch/multipart"), [],
                       "the journal forgets uploads that are over")

        // The other program's upload is counted, as more than a day old (moto dates every upload 2010).
        XCTAssertTrue(rerun.stderr.contains("s3://pics/killed has 1 incomplete multipart upload more than a day old that was "
            + "not started from this work directory"), rerun.stderr)

        // Nothing left to abort: the next run aborts nothing.
        let third = try run(table, ["-o", "s3://pics/killed", "--input-format", "csv", "--output-format", "webdataset", "--shard-samples", "4"],
                            environment: environment)
        XCTAssertEqual(third.exitCode, 0, third.stderr)
        XCTAssertFalse(third.stderr.contains("an earlier run left"), third.stderr)
    }

    func testVirtualHostedAddressingNamesTheBucketInTheHostAndARegionMismatchIsTheStoresToSay() throws {
        store.stop()
        store = try S3TestStore(others: ["far@eu-west-1"])
        let list = try scratch.write("urls.txt", images.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        // BUCKET.s3.localhost:PORT: libcurl resolves any *.localhost to loopback.
        let port = try XCTUnwrap(URL(string: store.endpoint)?.port)
        var environment = store.environment
        environment["AWS_ENDPOINT_URL"] = "http://s3.localhost:\(port)"
        environment["AWS_S3_ADDRESSING_STYLE"] = "virtual"
        let virtual = try run(list, ["-o", "s3://pics/vh"], environment: environment)
        XCTAssertEqual(virtual.exitCode, 0, virtual.stderr)
        let requests = try store.requests(withWriteChecks: true)
        XCTAssertFalse(requests.isEmpty)
        XCTAssertEqual(Set(requests.map(\.host)), ["pics.s3.localhost"], "\(requests)")
        XCTAssertEqual(Set(requests.filter { $0.method == "PUT" }.map(\.key)),
                       Set(["vh/.imgfetch-write-check"] + images.map { "vh/" + $0 }))
        for image in images {
            XCTAssertEqual(try store.objects(prefix: "vh/")["vh/" + image]?.sha256, sha256Hex(try server.fileData(image)))
        }

        // A bucket in another region than AWS_REGION: the store's answer says so (AWS's 400
        // AuthorizationHeaderMalformed with x-amz-bucket-region, from the proxy: moto does not
        // check), in either style, before any download. (Path style goes to 127.0.0.1: moto takes
        // the host s3.localhost for a bucket named s3.)
        for (style, endpoint) in [("virtual", "http://s3.localhost:\(port)"), ("path", store.endpoint)] {
            environment["AWS_S3_ADDRESSING_STYLE"] = style
            environment["AWS_ENDPOINT_URL"] = endpoint
            let before = try imageDownloads()
            let far = try run(list, ["-o", "s3://far/\(style)"], environment: environment)
            XCTAssertEqual(far.exitCode, 2, far.stderr)
            XCTAssertTrue(far.stderr.contains("s3://far/\(style): the bucket is in region eu-west-1, not us-east-1 (set AWS_REGION=eu-west-1)"),
                          far.stderr)
            XCTAssertEqual(try imageDownloads(), before)
            environment["AWS_REGION"] = "eu-west-1"
            let told = try run(list, ["-o", "s3://far/\(style)"], environment: environment)
            XCTAssertEqual(told.exitCode, 0, told.stderr)
            XCTAssertEqual(try store.objects(prefix: "\(style)/", in: "far").count, images.count)
            environment["AWS_REGION"] = "us-east-1"
        }
    }
}
