import Foundation
import XCTest

/// `Scripts/spark-fetch` on Spark's local[2,3] against nginx, with the packaged binary
/// (`Scripts/test-support/check_spark.py`): coverage by the `--shard` hash, a result row per item, a second run
/// without a request, empty and bad-only partitions, a worker killed mid-shard, and two attempts
/// of one partition at once; then the job on local-cluster, whose executors are JVMs of their own.
/// The whole of it runs where the Swift toolchain cannot be seen (`Scripts/test-support/without-toolchain`), as
/// on a cluster, and a `swift build` binary is refused before Spark starts. `Scripts/test`
/// installs pyspark (`install-deps --with-spark`) and builds the package.
final class SparkJobTests: XCTestCase {
    func testTheSparkJobFetchesEveryItemOnceAndSurvivesItsFaults() throws {
        let packaged = try PackagedArtifacts()
        let root = TestServer.packageRoot
        let python = root.appendingPathComponent(".venv-spark/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            // Not skipped quietly: Scripts/test always installs it.
            return XCTFail("no pyspark at \(python.path): run Scripts/install-deps --with-spark")
        }
        let run = try ImgFetchRunner.run([python.path, root.appendingPathComponent("Scripts/test-support/check_spark.py").path,
                                          "--imgfetch", packaged.binary.path, "--toolchain", try PackagedArtifacts.toolchain,
                                          "--toolchain-bound", ImgFetchRunner.binary.path],
                                         environment: ProcessInfo.processInfo.environment.merging(["PYSPARK_PYTHON": python.path]) { $1 },
                                         executable: root.appendingPathComponent("Scripts/test-support/without-toolchain"), timeout: 1500)
        let summary = run.stdout.split(separator: "\n").filter { $0.hasPrefix("check-spark:") }.joined(separator: "\n")
        XCTAssertEqual(run.exitCode, 0, summary + "\n" + String(run.stderr.suffix(4000)))
        XCTAssertTrue(run.stdout.contains("check-spark: 9. on local-cluster"), summary)
        XCTAssertTrue(run.stdout.contains("check-spark: all checks passed"), summary)
    }
}
