import Foundation
import XCTest

/// `Scripts/spark-fetch` on Spark's local[2,3] against nginx, with the real binary
/// (`Scripts/check-spark.py`): coverage by the `--shard` hash, a result row per item, a second run
/// without a request, empty and bad-only partitions, a worker killed mid-shard, and two attempts
/// of one partition at once. `Scripts/test` installs pyspark (`install-deps --with-spark`).
final class SparkJobTests: XCTestCase {
    func testTheSparkJobFetchesEveryItemOnceAndSurvivesItsFaults() throws {
        let root = TestServer.packageRoot
        let python = root.appendingPathComponent(".venv-spark/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            // Not skipped quietly: Scripts/test always installs it.
            return XCTFail("no pyspark at \(python.path): run Scripts/install-deps --with-spark")
        }
        let run = try ImgFetchRunner.run([root.appendingPathComponent("Scripts/check-spark.py").path, "--imgfetch", ImgFetchRunner.binary.path],
                                         environment: ProcessInfo.processInfo.environment.merging(["PYSPARK_PYTHON": python.path]) { $1 },
                                         executable: python)
        let summary = run.stdout.split(separator: "\n").filter { $0.hasPrefix("check-spark:") }.joined(separator: "\n")
        XCTAssertEqual(run.exitCode, 0, summary + "\n" + String(run.stderr.suffix(4000)))
        XCTAssertTrue(run.stdout.contains("check-spark: all checks passed"), summary)
    }
}
