import Foundation
import XCTest

/// Issue 20: lists of any length in constant memory, and a full disk that stops the run.
///
/// The long-list tests run the packaged release binary (`IMGFETCH_PACKAGED_BINARY`, which
/// `Scripts/test` builds with `Scripts/package`): the debug build takes four times as long a
/// line, and two million lines are what tells constant memory from the old claims (about 40 bytes
/// a line) apart.
final class BoundedResourceTests: EndToEndTestCase {
    /// The peak RSS the README promises, whatever the list's length.
    static let memoryBound = 64 << 20

    // MARK: - Constant memory

    /// Two million distinct URLs with `--cache-policy only-if-cached` into an empty directory:
    /// every line is named (a claim each) and answered as not cached, without a request. Before
    /// the claims moved to disk, this took 120 MiB; the bound is 64 MiB whatever the length.
    func testTwoMillionLinesRunInConstantMemory() throws {
        let binary = try releaseBinary()
        let list = scratch.file("long.txt").path
        let generated = try ImgFetchRunner.runShell("seq 1 2000000 | sed 's#^#\(server.base)/len/#; s#$#.jpg#' > '\(list)'")
        XCTAssertEqual(generated.exitCode, 0, generated.stderr)
        let run = try ImgFetchRunner.runShell("""
            /usr/bin/time -f '%M' -o '\(scratch.file("rss").path)' '\(binary)' '\(list)' -o '\(outputDirectory)' \
                --cache-policy only-if-cached --failures-are-data 2> '\(scratch.file("stderr").path)' \
              | awk '$1 == "failed" && /not in the cache index/ { missing++ } END { print NR, missing + 0 }'
            """)
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "2000000 2000000",
                       "a result line for every list line, each not cached")
        XCTAssertEqual(try server.requests().count, 0)
        let stderr = try String(contentsOf: scratch.file("stderr"), encoding: .utf8)
        XCTAssertTrue(stderr.contains("imgfetch: 2000000 items: 0 saved, 0 skipped, 2000000 failed"), stderr)
        try assertPeakRSS(file: "rss", "2,000,000 lines")
    }

    /// A LAION-shaped Parquet file of a million rows (pyarrow, Snappy, dictionary-encoded URLs and
    /// text, nulls, a float similarity) streams through in the same bound: a page per column, not
    /// the row group.
    func testAMillionRowParquetFileStreamsInConstantMemory() throws {
        let binary = try releaseBinary()
        let list = scratch.file("laion.parquet").path
        let made = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/make_parquet.py").path, list,
                                           "--rows", "1000000", "--url-base", server.base + "/len"],
                                          executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(made.exitCode, 0, made.stderr)
        let run = try ImgFetchRunner.runShell("""
            /usr/bin/time -f '%M' -o '\(scratch.file("rss").path)' '\(binary)' '\(list)' -o '\(outputDirectory)' \
                --caption-column caption --cache-policy only-if-cached --failures-are-data --jsonl 2> '\(scratch.file("stderr").path)' \
              | awk '/"similarity":0.253,/ { typed++ } END { print NR, typed + 0 }'
            """)
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        // A result line per row, and the float column typed in each row that has it.
        let typed = (0..<1_000_000).filter { $0 % 100 == 3 && $0 % 11 != 5 }.count
        XCTAssertEqual(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "1000000 \(typed)")
        XCTAssertEqual(try server.requests().count, 0)
        try assertPeakRSS(file: "rss", "a million Parquet rows")
    }

    /// `yes URL | imgfetch -`: a list that never ends runs in constant memory until interrupted,
    /// then exits 130 with its summary.
    func testAListThatNeverEndsRunsInConstantMemoryUntilInterrupted() throws {
        let binary = try releaseBinary()
        _ = try addJPEG("a.jpg")
        let yes = Process()
        yes.executableURL = URL(fileURLWithPath: "/usr/bin/yes")
        yes.arguments = [server.url("/files/a.jpg")]
        let lines = Pipe()
        yes.standardOutput = lines
        let imgfetch = Process()
        imgfetch.executableURL = URL(fileURLWithPath: binary)
        imgfetch.arguments = ["-", "-o", outputDirectory]
        imgfetch.standardInput = lines
        let results = Pipe()
        imgfetch.standardOutput = results
        imgfetch.standardError = try FileHandle(forWritingTo: scratch.file("stderr").creatingEmptyFile())
        try yes.run()
        try imgfetch.run()
        defer { if yes.isRunning { yes.terminate() } }
        let counter = LineCounter(results.fileHandleForReading)

        // Long enough for hundreds of thousands of lines; the high-water mark is read while it runs.
        Thread.sleep(forTimeInterval: 12)
        let status = try String(contentsOfFile: "/proc/\(imgfetch.processIdentifier)/status", encoding: .utf8)
        kill(imgfetch.processIdentifier, SIGINT)
        imgfetch.waitUntilExit()
        yes.terminate()
        let count = counter.finish()

        XCTAssertEqual(imgfetch.terminationStatus, 130)
        XCTAssertGreaterThan(count, 100_000, "lines read and answered in 12 s")
        let stderr = try String(contentsOf: scratch.file("stderr"), encoding: .utf8)
        XCTAssertNotNil(stderr.range(of: #"imgfetch: \d+ items: \d+ saved"#, options: .regularExpression), stderr)
        let peak = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kib = try XCTUnwrap(Int(peak.split(separator: " ", omittingEmptySubsequences: true)[1]))
        XCTAssertLessThanOrEqual(kib * 1024, Self.memoryBound, "peak RSS \(kib) KiB after \(count) lines")
        XCTAssertEqual(try server.requests(to: "/files/a.jpg").count, 1)
    }

    /// Distinct URLs that all want `cat.jpg`: the first gets it, every other one its hash-suffixed name.
    func testDistinctURLsWantingOneNameEachGetTheirOwnFile() throws {
        let data = try addJPEG("cat.jpg")
        let urls = (0..<1000).map { server.url("/files/cat.jpg?v=\($0)") }
        let result = try fetch(urls, ["--no-decode", "-q"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        // The names the rule gives, from Python's SHA-256: cat-XXXXXXXX.jpg for all but the first.
        let names = try ImgFetchRunner.run(["-c", """
            import hashlib, sys
            urls = sys.stdin.read().split()
            print("cat.jpg"); [print("cat-" + hashlib.sha256(u.encode()).hexdigest()[:8] + ".jpg") for u in urls[1:]]
            """], stdin: urls.joined(separator: "\n"), executable: URL(fileURLWithPath: "/usr/bin/python3"))
        XCTAssertEqual(Set(try outputFiles()), Set(names.stdout.split(separator: "\n").map(String.init)))
        XCTAssertEqual(try outputFiles().count, 1000)
        XCTAssertEqual(try outputData("cat.jpg"), data)
    }

    // MARK: - A full disk

    /// 1000 bodies of 60 KB into a 20 MiB file system, `--min-free 0`: the first write that
    /// fails stops the run. What was downloaded afterwards is at most what was in flight, every
    /// other item fails as `disk-full` without a request, and the index is whole.
    func testADiskThatFillsStopsTheDownloadsAndKeepsTheIndexWhole() throws {
        let disk = try SmallDisk(in: scratch, name: "full", size: "20m")
        defer { disk.unmount() }
        let (list, bodyBytes) = try noiseList()
        let concurrency = 8
        let result = try ImgFetchRunner.run([list, "-o", disk.path, "--no-decode", "-j", String(concurrency), "--jsonl",
                                             "--min-free", "0"])
        XCTAssertEqual(result.exitCode, 1, result.stderr)

        let lines = try jsonLines(result.stdout)
        XCTAssertEqual(lines.count, 1000)
        let saved = lines.filter { $0["status"] as? String == "saved" }.count
        let failed = lines.filter { $0["status"] as? String == "failed" }
        XCTAssertGreaterThan(saved, 100)
        XCTAssertEqual(saved + failed.count, 1000)
        var ownWriteFailures = 0
        for line in failed {
            let error = line["error"] as? [String: Any]
            XCTAssertEqual(error?["class"] as? String, "disk-full", "\(line)")
            let message = error?["message"] as? String ?? ""
            if !message.hasPrefix("not downloaded: ") { ownWriteFailures += 1 }
            XCTAssertTrue(message.contains("No space left on device") || message.contains("database or disk is full"), message)
        }
        // In flight when the disk filled: the running transfers, and the bodies waiting to be
        // written (the decode backlog, 32). Every body past the saved ones was one of them.
        let inFlight = concurrency + 32
        // The first write refused may be an item's or the index's (then every item says "not downloaded").
        XCTAssertLessThanOrEqual(ownWriteFailures, inFlight)
        XCTAssertGreaterThan(failed.count - ownWriteFailures, 500, "the rest failed without a request")
        let requests = try server.requests(to: "/files/noise.jpg").count
        XCTAssertLessThanOrEqual(requests, saved + inFlight, "\(requests) requests for \(saved) saved files")
        let sent = try server.sentBodies().filter { $0.path.hasPrefix("/files/noise.jpg") }.reduce(0) { $0 + $1.bytes }
        XCTAssertLessThanOrEqual(sent, (saved + inFlight) * bodyBytes)
        XCTAssertTrue(result.stderr.contains("imgfetch: stopped downloading: the output's disk is full ("), result.stderr)
        XCTAssertTrue(result.stderr.contains("failed with class disk-full"), result.stderr)
        XCTAssertEqual(try integrityCheck(disk.path + "/.imgfetch/index.sqlite"), "ok")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.hasPrefix(".imgfetch-") }
        XCTAssertEqual(leftovers, [], "no temp file is left")

        // A cluster worker on a full disk: a temporary failure, for its engine to run again elsewhere.
        let worker = try ImgFetchRunner.run([list, "-o", disk.path, "--no-decode", "--failures-are-data", "--min-free", "0"])
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
    }

    /// `--min-free` stops the run before the disk is full, and by default (64M) a disk smaller
    /// than that starts no download at all.
    func testMinFreeStopsBeforeTheDiskIsFull() throws {
        let disk = try SmallDisk(in: scratch, name: "min-free", size: "30m")
        defer { disk.unmount() }
        let (list, bodyBytes) = try noiseList()

        let cautious = try ImgFetchRunner.run([list, "-o", disk.path, "--no-decode", "-j", "8", "--min-free", "20M"])
        XCTAssertEqual(cautious.exitCode, 1, cautious.stderr)
        let failures = cautious.results.filter { $0[0] == "failed" }
        XCTAssertGreaterThan(failures.count, 500)
        for line in failures { XCTAssertTrue(line[2].contains("below --min-free 20.0 MiB"), line.joined(separator: " ")) }
        XCTAssertFalse(cautious.stdout.contains("No space left on device"), "the disk never filled")
        let free = try XCTUnwrap(try FileManager.default.attributesOfFileSystem(forPath: disk.path)[.systemFreeSize] as? Int)
        XCTAssertGreaterThan(free, (20 << 20) - 48 * bodyBytes, "at most what was in flight went past the limit")
        XCTAssertTrue(cautious.stderr.contains("below --min-free 20.0 MiB"), cautious.stderr)

        // The default keeps 64 MiB: on this disk no request is made at all.
        let before = try server.requests(to: "/files/noise.jpg").count
        let defaults = try ImgFetchRunner.run([list, "-o", disk.path + "/fresh", "--no-decode"])
        XCTAssertEqual(defaults.exitCode, 1, defaults.stderr)
        XCTAssertEqual(defaults.results.filter { $0[0] == "failed" }.count, 1000)
        XCTAssertEqual(try server.requests(to: "/files/noise.jpg").count, before, "no request below the default --min-free")
    }

    // MARK: - Helpers

    private func releaseBinary() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["IMGFETCH_PACKAGED_BINARY"],
              FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("IMGFETCH_PACKAGED_BINARY is not set (Scripts/test builds and sets it)")
        }
        return path
    }

    private func assertPeakRSS(file: String, _ what: String) throws {
        let text = try String(contentsOf: scratch.file(file), encoding: .utf8)
        let kib = try XCTUnwrap(Int(text.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) ?? ""), text)
        XCTAssertLessThanOrEqual(kib * 1024, Self.memoryBound, "peak RSS \(kib) KiB for \(what)")
    }

    /// A list of 1000 distinct URLs of one 60 KB body that sniffs as JPEG (`/files/noise.jpg?N`),
    /// and the body's size.
    private func noiseList() throws -> (list: String, bodyBytes: Int) {
        let bytes = 60_000
        var body = Data([0xFF, 0xD8, 0xFF, 0xE0])
        var generator = SystemRandomNumberGenerator()
        body.append(contentsOf: (0..<(bytes - 4)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        _ = try server.addFile("noise.jpg", body)
        let urls = (0..<1000).map { server.url("/files/noise.jpg?\($0)") }
        return (try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n"), bytes)
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// SQLite's own check of the index file, through Python's sqlite3.
    private func integrityCheck(_ path: String) throws -> String {
        let check = try ImgFetchRunner.run(["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", path],
                                           executable: URL(fileURLWithPath: "/usr/bin/python3"))
        XCTAssertEqual(check.exitCode, 0, check.stderr)
        return check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Counts the lines a pipe carries, on its own thread, without keeping them.
private final class LineCounter: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var count = 0

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                count += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            }
            done.signal()
        }
    }

    func finish() -> Int {
        done.wait()
        return count
    }
}

private extension URL {
    /// Creates an empty file here and returns this URL.
    func creatingEmptyFile() throws -> URL {
        try Data().write(to: self)
        return self
    }
}
