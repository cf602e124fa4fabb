import Foundation
import XCTest

/// `--cache-policy` and the cache index in `DIR/.imgfetch/`: what a second run over the same list
/// asks the server, and what it does to the files.
final class CacheTests: EndToEndTestCase {
    private let maxAge = "/header/Cache-Control/max-age%3D600"

    // MARK: - protocol (default)

    func testFreshEntriesNeedNoRequestAndKeepTheirFiles() throws {
        let data = try addStaleJPEG()
        let urls = [server.url("\(maxAge)/files/a.jpg"), server.url("\(maxAge)/files/a.jpg?v=2")]
        let first = try fetchJSON(urls.map { $0 + " out=\(urls.firstIndex(of: $0)!).jpg" })
        XCTAssertEqual(first.items.map { $0["cache"] as? String }, ["downloaded", "downloaded"])
        let before = try inodes()

        let second = try fetchJSON(urls.map { $0 + " out=\(urls.firstIndex(of: $0)!).jpg" })
        XCTAssertEqual(second.execution.exitCode, 0, second.execution.stderr)
        XCTAssertEqual(second.items.map { $0["status"] as? String }, ["skipped", "skipped"])
        XCTAssertEqual(second.items.map { $0["cache"] as? String }, ["fresh", "fresh"])
        XCTAssertEqual(second.items.map { $0["bytes"] as? Int }, [0, 0])
        XCTAssertEqual(try server.requests().count, 2, "the second run made no request")
        XCTAssertEqual(try inodes(), before, "no file was touched")
        XCTAssertEqual(try outputData("0.jpg"), data)
        XCTAssertTrue(second.execution.stderr.contains("cache: 2 fresh, 0 revalidated, 0 downloaded"), second.execution.stderr)
    }

    func testARunLeavesTheWriteAheadLogEmpty() throws {
        let names = try server.addSamples(count: 20)
        let result = try fetch(names.map { server.url("/files/\($0)") })
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let log = outputDirectory + "/.imgfetch/index.sqlite-wal"
        let size = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
        XCTAssertEqual(size, 0, "the log was folded into the index and truncated at exit")
        // Everything is in the index itself.
        let count = try ImgFetchRunner.run(["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("
                                            + "'SELECT count(*) FROM entries').fetchone()[0])", outputDirectory + "/.imgfetch/index.sqlite"],
                                           executable: URL(fileURLWithPath: "/usr/bin/python3"))
        XCTAssertEqual(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(names.count)", count.stderr)
    }

    func testTheIndexLivesInTheWorkDirectoryWhenOneIsGiven() throws {
        _ = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        let work = scratch.file("scratch-disk").path
        let first = try fetchJSON([url], ["--work-dir", work])
        XCTAssertEqual(first.items.first?["status"] as? String, "saved", first.execution.stderr)
        let folders = try FileManager.default.contentsOfDirectory(atPath: work)
        XCTAssertEqual(folders.count, 1)
        XCTAssertTrue(folders.allSatisfy { $0.hasPrefix("index-") }, "\(folders)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(work)/\(folders[0])/.imgfetch/index.sqlite"), "the index is in the work directory")
        XCTAssertFalse(FileManager.default.fileExists(atPath: outputDirectory + "/.imgfetch/index.sqlite"), "and not beside the images")
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
        let second = try fetchJSON([url], ["--work-dir", work])
        XCTAssertEqual(second.items.first?["cache"] as? String, "fresh", second.execution.stderr)
        XCTAssertEqual(try server.requests().count, 1, "the second run found the entry in the work directory's index")

        // Another output with the same work directory has its own index: a file of the user's
        // there under the same name is not taken for the first output's cached one.
        let other = scratch.file("other").path
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data("the user's own file".utf8).write(to: URL(fileURLWithPath: other + "/a.jpg"))
        let third = try ImgFetchRunner.run([try scratch.write("one.txt", url + "\n"), "-o", other, "--work-dir", work, "--jsonl"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work).count, 2, third.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: other + "/a.jpg")), Data("the user's own file".utf8),
                       "the file is the user's, not a cache entry of another output")
    }

    func testHeuristicFreshnessComesFromLastModified() throws {
        _ = try addStaleJPEG()
        try server.setModificationDate(of: "a.jpg", daysAgo: 10)
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["cache"] as? String, "fresh", "10 days unmodified: fresh for a day (RFC 9111 §4.2.2)")
        XCTAssertEqual(try server.requests().count, 1)
    }

    func testStaleEntryIsRevalidatedWithItsETag() throws {
        _ = try addStaleJPEG()
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let etag = try currentETag("a.jpg")
        let before = try inodes()

        let second = try fetchJSON([url])
        XCTAssertEqual(second.execution.exitCode, 0, second.execution.stderr)
        let item = try XCTUnwrap(second.items.first)
        XCTAssertEqual(item["status"] as? String, "skipped")
        XCTAssertEqual(item["cache"] as? String, "revalidated")
        XCTAssertEqual(item["http_status"] as? Int, 304)
        XCTAssertEqual(item["bytes"] as? Int, 0)
        // What the run that made the file reported: the indexed body's size.
        let made = try XCTUnwrap(item["made"] as? [String: Any])
        XCTAssertEqual(made["status"] as? String, "saved")
        XCTAssertEqual(made["http_status"] as? Int, 200)
        XCTAssertEqual(made["bytes"] as? Int, try server.fileData("a.jpg").count)
        let revalidation = try XCTUnwrap(try server.requests().last)
        XCTAssertEqual(revalidation.header("If-None-Match"), etag)
        XCTAssertNotNil(revalidation.header("If-Modified-Since"))
        XCTAssertEqual(try inodes(), before)
        XCTAssertTrue(second.execution.stderr.contains("cache: 0 fresh, 1 revalidated, 0 downloaded"), second.execution.stderr)
    }

    func testLastModifiedAloneRevalidatesWithIfModifiedSince() throws {
        _ = try addStaleJPEG()
        let url = server.url("/drop-header/ETag/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["cache"] as? String, "revalidated")
        let revalidation = try XCTUnwrap(try server.requests().last)
        XCTAssertNil(revalidation.header("If-None-Match"))
        XCTAssertNotNil(revalidation.header("If-Modified-Since"))
    }

    func testNoCacheAndMustRevalidateAreRevalidatedEveryRun() throws {
        _ = try addStaleJPEG()
        let noCache = server.url("/header/Cache-Control/max-age%3D600%2C%20no-cache/files/a.jpg")
        let mustRevalidate = server.url("/header/Cache-Control/max-age%3D0%2C%20must-revalidate/files/a.jpg?m")
        XCTAssertEqual(try fetch([noCache, mustRevalidate + " out=m.jpg"]).exitCode, 0)
        for _ in 0..<2 {
            let again = try fetchJSON([noCache, mustRevalidate + " out=m.jpg"])
            XCTAssertEqual(again.items.map { $0["cache"] as? String }, ["revalidated", "revalidated"], again.execution.stdout)
        }
        XCTAssertEqual(try server.requests().filter { $0.header("If-None-Match") != nil }.count, 4)
    }

    func testChangedContentReplacesTheFile() throws {
        _ = try addStaleJPEG()
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let changed = try changeServedJPEG()

        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["status"] as? String, "saved")
        XCTAssertEqual(second.items.first?["cache"] as? String, "downloaded")
        XCTAssertEqual(try outputData("a.jpg"), changed)
        XCTAssertEqual(try outputFiles(), ["a.jpg"], "no temp file left")
        let third = try fetchJSON([url])
        XCTAssertEqual(third.items.first?["cache"] as? String, "revalidated", "the index took the new ETag")
    }

    func testADeletedFileIsFetchedAgainWithoutValidators() throws {
        let data = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        try FileManager.default.removeItem(atPath: outputDirectory + "/a.jpg")

        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["status"] as? String, "saved")
        XCTAssertEqual(second.items.first?["cache"] as? String, "downloaded")
        XCTAssertEqual(try outputData("a.jpg"), data)
        let refetch = try XCTUnwrap(try server.requests().last)
        XCTAssertNil(refetch.header("If-None-Match"), "a 304 would leave nothing to serve")
    }

    func testAFileEditedToTheSameSizeIsNotServedAsFresh() throws {
        let data = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        // Same length, other bytes: size alone would take it for the indexed body.
        var edited = data
        edited[edited.count - 3] ^= 0xFF
        try edited.write(to: URL(fileURLWithPath: outputDirectory + "/a.jpg"))

        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["cache"] as? String, "downloaded")
        XCTAssertEqual(try outputData("a.jpg"), data, "the edited file was replaced by the URL's body")
    }

    func testNoStoreIsSavedButNotIndexed() throws {
        _ = try addStaleJPEG()
        let url = server.url("/header/Cache-Control/no-store/files/a.jpg")
        let first = try fetchJSON([url])
        XCTAssertEqual(first.items.first?["status"] as? String, "saved")
        // Not indexed: the file is an ordinary existing file now, which --skip-existing keeps.
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["status"] as? String, "skipped")
        XCTAssertTrue(second.items.first?["cache"] is NSNull)
        let third = try fetchJSON([url], ["--cache-policy", "only-if-cached", "--overwrite"])
        XCTAssertEqual((third.items.first?["error"] as? [String: Any])?["class"] as? String, "not-cached")
        XCTAssertEqual(try server.requests().count, 1)
    }

    func testAnUnchangedBodyWithoutValidatorsLeavesTheFileUntouched() throws {
        _ = try addStaleJPEG()
        let url = server.url("/drop-header/ETag/drop-header/Last-Modified/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let before = try inodes()
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["status"] as? String, "skipped", "same SHA-256 as the indexed file")
        XCTAssertEqual(second.items.first?["cache"] as? String, "downloaded")
        XCTAssertEqual(try inodes(), before)
        XCTAssertEqual(try server.requests().count, 2)
    }

    func testDuplicatesInOneRunShareOneRevalidation() throws {
        _ = try addStaleJPEG()
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let second = try fetchJSON([url, url + " out=copy.jpg", url])
        XCTAssertEqual(second.execution.exitCode, 0, second.execution.stderr)
        XCTAssertEqual(try server.requests().count, 2, "one conditional request for three items")
        XCTAssertEqual(try outputData("copy.jpg"), try outputData("a.jpg"))
        XCTAssertEqual(second.items.map { $0["status"] as? String }, ["skipped", "saved", "skipped"])
        // The copy joined the index: a third run keeps it too.
        let third = try fetchJSON([url + " out=copy.jpg"])
        XCTAssertEqual(third.items.first?["status"] as? String, "skipped")
    }

    func testMalformedCacheControlIsIgnoredNotFatal() throws {
        _ = try addStaleJPEG()
        let url = server.url("/header/Cache-Control/%3D%2C%20max-age%3D600%2C%3D5/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let second = try fetchJSON([url])
        XCTAssertEqual(second.execution.exitCode, 0, second.execution.stderr)
        XCTAssertEqual(second.items.first?["cache"] as? String, "fresh", "the valid max-age still counts")
    }

    func testAfterARedirectOnlyTheFinalURLGetsTheValidators() throws {
        _ = try addStaleJPEG()
        let url = server.url("/redirect/1/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let before = try server.requests().count
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["cache"] as? String, "revalidated")
        let hops = try server.requests().dropFirst(before)
        XCTAssertEqual(hops.map(\.path), ["/redirect/1/files/a.jpg", "/redirect/0/files/a.jpg"])
        XCTAssertEqual(hops.map { $0.header("If-None-Match") != nil }, [false, true], "validators belong to the final URL")
    }

    func testACopyServedLaterInTheRunReplacesItsOldContent() throws {
        _ = try addStaleJPEG()
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url, url + " out=copy.jpg"]).exitCode, 0)
        let changed = try changeServedJPEG()

        // The second line arrives after the first finished: it is served from the run's memory of the URL.
        let second = try fetchCopyAfterTheURLFinished(url)
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(try outputData("a.jpg"), changed)
        XCTAssertEqual(try outputData("copy.jpg"), changed, "the index's old copy was replaced, not skipped")
    }

    func testACopyServedLaterInTheRunKeepsItsFileWhenA304ConfirmedIt() throws {
        _ = try addStaleJPEG()
        let url = server.url("/files/a.jpg")
        XCTAssertEqual(try fetch([url, url + " out=copy.jpg"]).exitCode, 0)
        let copy = try FileManager.default.attributesOfItem(atPath: outputDirectory + "/copy.jpg")

        // As above, the copy's line comes after the URL's revalidation (a 304) finished.
        let second = try fetchCopyAfterTheURLFinished(url, ["--jsonl"])
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        let statuses = second.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.map { $0["status"] as? String }
        XCTAssertEqual(statuses, ["skipped", "skipped"], "the copy the 304 confirmed is kept, not written again")
        let after = try FileManager.default.attributesOfItem(atPath: outputDirectory + "/copy.jpg")
        XCTAssertEqual(after[.systemFileNumber] as? Int, copy[.systemFileNumber] as? Int, "copy.jpg was replaced")
    }

    func testAnotherSaveAsIsNotServedFromOriginals() throws {
        _ = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let pixels = try fetchJSON([url], ["--save-as", "ppm"])
        XCTAssertEqual(pixels.items.first?["status"] as? String, "saved")
        XCTAssertEqual(try outputFiles(), ["a.jpg", "a.ppm"])
        XCTAssertEqual(try fetchJSON([url], ["--save-as", "ppm"]).items.first?["cache"] as? String, "fresh")
    }

    // MARK: - reload and only-if-cached

    func testReloadDownloadsInFullAndStillUpdatesTheIndex() throws {
        _ = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        XCTAssertEqual(try fetch([url]).exitCode, 0)
        let reload = try fetchJSON([url], ["--cache-policy", "reload"])
        XCTAssertEqual(reload.items.first?["cache"] as? String, "downloaded")
        XCTAssertEqual(reload.items.first?["status"] as? String, "saved", "reload rewrites even an unchanged body")
        XCTAssertEqual(try server.requests().count, 2)
        XCTAssertNil(try server.requests().last?.header("If-None-Match"), "reload sends no validators")
        XCTAssertEqual(try fetchJSON([url]).items.first?["cache"] as? String, "fresh")
        XCTAssertEqual(try server.requests().count, 2)
    }

    func testOnlyIfCachedMakesNoRequestAndReportsWhatIsMissing() throws {
        _ = try addStaleJPEG()
        let fresh = server.url("\(maxAge)/files/a.jpg")
        let stale = server.url("/files/a.jpg")
        let never = server.url("/files/never.jpg")
        let noCache = server.url("/header/Cache-Control/no-cache/files/a.jpg")
        XCTAssertEqual(try fetch([fresh, stale + " out=b.jpg", noCache + " out=c.jpg"]).exitCode, 0)
        let requests = try server.requests().count

        let cached = try fetchJSON([fresh, stale + " out=b.jpg", never, noCache + " out=c.jpg"], ["--cache-policy", "only-if-cached"])
        XCTAssertEqual(try server.requests().count, requests, "no request at all")
        XCTAssertEqual(cached.execution.exitCode, 1)
        XCTAssertEqual(cached.items.map { $0["status"] as? String }, ["skipped", "skipped", "failed", "failed"])
        XCTAssertEqual(cached.items.map { $0["cache"] as? String }, ["fresh", "stale", nil, nil])
        XCTAssertTrue(cached.execution.stderr.contains("failed \(never): not in the cache index"), cached.execution.stderr)
        XCTAssertTrue(cached.execution.stderr.contains("failed \(noCache): stale in the cache index, and the server requires "
            + "revalidation"), cached.execution.stderr)
    }

    // MARK: - The index survives

    func testAfterKill9EveryReportedEntryIsStillFresh() throws {
        _ = try addStaleJPEG()
        let lines = (0..<300).map { server.url("\(maxAge)/delay/0.02/files/a.jpg?n=\($0)") + " out=a-\($0).jpg" }
        let list = try scratch.write("urls.txt", lines.joined(separator: "\n") + "\n")
        let running = try RunningImgFetch([list, "-o", outputDirectory, "-j", "4"])
        let stdout = URL(fileURLWithPath: running.stdoutPath)
        XCTAssertTrue(try eventually { try String(contentsOf: stdout, encoding: .utf8).split(separator: "\n").count >= 40 })
        running.signal(SIGKILL)
        let killed = try running.wait()
        let reported = killed.results.filter { $0[0] == "saved" }.map { $0[1] }
        XCTAssertGreaterThanOrEqual(reported.count, 40)
        XCTAssertLessThan(reported.count, 300, "the kill came before the end")
        let requests = try server.requests().count

        let second = try fetchJSON(lines, ["--cache-policy", "only-if-cached"])
        XCTAssertFalse(second.execution.stderr.contains("warning"), second.execution.stderr)
        let byURL = Dictionary(second.items.map { ($0["url"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        for url in reported {
            XCTAssertEqual(byURL[url]?["cache"] as? String, "fresh", "reported before the kill, so indexed: \(url)")
        }
        XCTAssertEqual(try server.requests().count, requests)
    }

    func testADamagedIndexIsReplacedWithAWarning() throws {
        _ = try addStaleJPEG()
        let url = server.url("\(maxAge)/files/a.jpg")
        let folder = outputDirectory + "/.imgfetch"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: folder + "/index.sqlite"))

        let first = try fetch([url])
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("moved it to index.sqlite.corrupt"), first.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/index.sqlite.corrupt"))
        let second = try fetchJSON([url])
        XCTAssertEqual(second.items.first?["cache"] as? String, "fresh")
        XCTAssertFalse(second.execution.stderr.contains("warning"), second.execution.stderr)
    }

    // MARK: - Helpers

    /// A JPEG at /files/a.jpg whose Last-Modified is a day ahead: no heuristic freshness, so an
    /// entry without Cache-Control is stale however slowly the test runs.
    /// Runs `imgfetch - -o OUT ARGS` on `url`, then, once its result is out, `url out=copy.jpg`.
    private func fetchCopyAfterTheURLFinished(_ url: String, _ arguments: [String] = []) throws -> Execution {
        let input = Pipe()
        let running = try RunningImgFetch(["-", "-o", outputDirectory] + arguments, input: input)
        input.fileHandleForWriting.write(Data((url + "\n").utf8))
        XCTAssertTrue(eventually { (try? String(contentsOfFile: running.stdoutPath, encoding: .utf8))?.contains("a.jpg") == true })
        input.fileHandleForWriting.write(Data((url + " out=copy.jpg\n").utf8))
        try input.fileHandleForWriting.close()
        return try running.wait()
    }

    private func addStaleJPEG() throws -> Data {
        let data = try addJPEG("a.jpg")
        try server.setModificationDate(of: "a.jpg", daysAgo: -1)
        return data
    }

    /// Gives /files/a.jpg other content (another sample JPEG), still modified a day ahead.
    private func changeServedJPEG() throws -> Data {
        let samples = try server.addSamples(count: 2, seed: 11)
        let changed = try server.addFile("a.jpg", try server.fileData(samples.first { $0.hasSuffix(".jpg") && $0 != "a.jpg" }!))
        try server.setModificationDate(of: "a.jpg", daysAgo: -1)
        return changed
    }

    /// Runs with `--jsonl`; the items in list order.
    private func fetchJSON(_ lines: [String], _ arguments: [String] = []) throws -> (execution: Execution, items: [[String: Any]]) {
        let execution = try fetch(lines, arguments + ["--jsonl"])
        let items = try execution.stdout.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        // Results come in the order they finish; list order is easier to compare.
        func line(_ item: [String: Any]) -> Int { (item["line"] as? [String: Any])?["line"] as? Int ?? 0 }
        return (execution, items.sorted { line($0) < line($1) })
    }

    /// Inode and modification time of every output file: equal before and after means untouched.
    private func inodes() throws -> [String: [Int]] {
        var result: [String: [Int]] = [:]
        for name in try outputFiles() {
            var info = stat()
            XCTAssertEqual(lstat(outputDirectory + "/" + name, &info), 0)
            result[name] = [Int(info.st_ino), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
        }
        return result
    }

    /// The ETag the test server sends for a file: the SHA-1 of its bytes, quoted.
    private func currentETag(_ name: String) throws -> String {
        let sum = try ImgFetchRunner.runShell("sha1sum " + server.root.appendingPathComponent(name).path)
        return "\"" + (sum.stdout.split(separator: " ").first.map(String.init) ?? "") + "\""
    }
}
