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

    func testAHalfSetEnvironmentIsAUsageErrorBeforeAnyRequest() throws {
        let (list, _) = try sharedList()
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory], environment: ["JOB_COMPLETION_INDEX": "1"])
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("found JOB_COMPLETION_INDEX in the environment but not IMGFETCH_SHARD_COUNT"), run.stderr)
        XCTAssertTrue(try server.requests().isEmpty)
    }
}
