import Foundation
import XCTest

/// `--shard K/N` and the environments of Kubernetes Indexed Jobs and Slurm arrays: N processes
/// on one list fetch every URL exactly once, and report every line exactly once.
final class ShardTests: EndToEndTestCase {
    private func sharedList() throws -> (path: String, urls: [String]) {
        _ = try addJPEG("a.jpg")
        let urls = (0..<30).map { server.url("/files/a.jpg?n=\($0)") }
        let path = try scratch.write("shared.txt", (urls + ["ftp://not-http/x.jpg"]).joined(separator: "\n") + "\n")
        return (path, urls)
    }

    /// Runs one worker per environment on the shared list; returns every worker's result lines.
    private func runWorkers(_ environments: [[String: String]], list: String) throws -> [[String]] {
        var lines: [[String]] = []
        for (k, environment) in environments.enumerated() {
            let run = try ImgFetchRunner.run([list, "-o", scratch.file("out\(k)").path, "-q"], environment: environment)
            XCTAssertTrue(run.exitCode == 0 || run.exitCode == 1, "worker \(k): \(run.stderr)")
            lines += run.results
        }
        return lines
    }

    private func assertEveryLineOnce(_ lines: [[String]], urls: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let saved = lines.filter { $0[0] == "saved" }.map { $0[1] }
        XCTAssertEqual(saved.sorted(), urls.sorted(), "every URL saved by exactly one worker", file: file, line: line)
        XCTAssertEqual(lines.filter { $0[0] == "failed" }.count, 1, "the bad line reported once: \(lines)", file: file, line: line)
        let requested = try server.requests(to: "/files/a.jpg").map(\.path)
        XCTAssertEqual(requested.count, urls.count, "one request per URL across the workers", file: file, line: line)
        XCTAssertEqual(Set(requested).count, urls.count, file: file, line: line)
    }

    func testKubernetesIndexedJobWorkersCoverTheListOnce() throws {
        let (list, urls) = try sharedList()
        let environments = (0..<3).map { ["JOB_COMPLETION_INDEX": String($0), "IMGFETCH_SHARD_COUNT": "3"] }
        try assertEveryLineOnce(try runWorkers(environments, list: list), urls: urls)
    }

    func testSlurmArrayWorkersCoverTheListOnce() throws {
        let (list, urls) = try sharedList()
        // sbatch --array=0-2 with IMGFETCH_SHARD_COUNT=3 exported; Slurm's own variables as it sets them.
        let environments = (0..<3).map { ["SLURM_ARRAY_TASK_ID": String($0), "SLURM_ARRAY_TASK_MIN": "0",
                                          "SLURM_ARRAY_TASK_COUNT": "3", "IMGFETCH_SHARD_COUNT": "3"] }
        try assertEveryLineOnce(try runWorkers(environments, list: list), urls: urls)
    }

    func testASlurmTaskWithoutAShardCountTakesItsWholeList() throws {
        let (list, urls) = try sharedList()
        let lines = try runWorkers([["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"]], list: list)
        XCTAssertEqual(lines.filter { $0[0] == "saved" }.count, urls.count)
    }

    func testExplicitShardsByHostCoverTheListOnce() throws {
        let (list, urls) = try sharedList()
        var lines: [[String]] = []
        var workersThatSaved = 0
        for k in 0..<4 {
            let run = try ImgFetchRunner.run([list, "-o", scratch.file("out\(k)").path, "-q", "--shard", "\(k)/4", "--shard-by", "host"])
            lines += run.results
            if run.results.contains(where: { $0[0] == "saved" }) { workersThatSaved += 1 }
        }
        try assertEveryLineOnce(lines, urls: urls)
        XCTAssertEqual(workersThatSaved, 1, "one host: one worker took every URL")
    }

    func testWebDatasetWorkersShareOneDirectoryWithDistinctShardNamesAndKeys() throws {
        let (list, urls) = try sharedList()
        let shared = scratch.file("shards").path
        func runAll() throws -> [[String: Any]] {
            var results: [[String: Any]] = []
            for k in 0..<3 {
                let run = try ImgFetchRunner.run([list, "-o", shared, "--output-format", "webdataset", "--shard-samples", "4",
                                                  "--shard", "\(k)/3", "--jsonl", "-q"])
                XCTAssertTrue([0, 1].contains(run.exitCode), "worker \(k): \(run.stderr)")
                results += try run.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            }
            return results
        }
        let results = try runAll()
        XCTAssertEqual(results.count, urls.count + 1)
        XCTAssertEqual(results.filter { $0["status"] as? String == "failed" }.count, 1, "the ftp line, in one worker")
        let keys = results.compactMap { $0["key"] as? String }
        XCTAssertEqual(Set(keys).count, keys.count, "keys are distinct across workers: \(keys)")
        XCTAssertTrue(keys.allSatisfy { $0.range(of: #"^[0-2]-of-3-\d{6}_\d{6}$"#, options: .regularExpression) != nil }, "\(keys)")
        let names = try FileManager.default.contentsOfDirectory(atPath: shared).filter { $0.hasSuffix(".tar") }.sorted()
        XCTAssertTrue(names.contains("0-of-3-000000.tar") && names.contains("1-of-3-000000.tar") && names.contains("2-of-3-000000.tar"), "\(names)")
        var members: [String] = []
        for name in names {
            let listing = try ImgFetchRunner.run(["-tf", shared + "/" + name], executable: URL(fileURLWithPath: "/bin/tar"))
            members += listing.stdout.split(separator: "\n").filter { $0.hasSuffix(".jpg") }.map(String.init)
        }
        XCTAssertEqual(members.count, urls.count, "every URL's sample in one tar or another")
        XCTAssertEqual(Set(members).count, urls.count)

        // Each worker finds its own finished shards again: no request.
        let before = try server.requests().count
        let again = try runAll()
        XCTAssertEqual(try server.requests().count, before, "finished shards are skipped")
        XCTAssertEqual(again.filter { $0["status"] as? String == "skipped" }.count, urls.count)
    }

    func testAShardPrefixNamesTheShardsAndKeysAndMustBeAPlainName() throws {
        let (list, urls) = try sharedList()
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--shard-prefix", "part-7-",
                                          "--shard", "0/1", "--jsonl", "-q"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: outputDirectory + "/part-7-000000.tar"))
        let keys = run.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["key"] as? String }
        XCTAssertEqual(keys.count, urls.count + 1)
        XCTAssertTrue(keys.allSatisfy { $0.hasPrefix("part-7-000000_") }, "\(keys)")
        for bad in ["a.b", "a/b", "", String(repeating: "x", count: 65)] {
            let refused = try ImgFetchRunner.run([list, "-o", outputDirectory, "--output-format", "webdataset", "--shard-prefix", bad])
            XCTAssertEqual(refused.exitCode, 2, "--shard-prefix '\(bad)': \(refused.stderr)")
        }
        XCTAssertEqual(try ImgFetchRunner.run([list, "-o", outputDirectory, "--shard-prefix", "p-"]).exitCode, 2, "needs webdataset")
    }

    func testAHalfSetEnvironmentIsAUsageErrorBeforeAnyRequest() throws {
        let (list, _) = try sharedList()
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory], environment: ["JOB_COMPLETION_INDEX": "1"])
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("found JOB_COMPLETION_INDEX in the environment but not IMGFETCH_SHARD_COUNT"), run.stderr)
        XCTAssertTrue(try server.requests().isEmpty)
    }
}
