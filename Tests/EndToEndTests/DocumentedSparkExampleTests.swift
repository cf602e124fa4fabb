import Foundation
import XCTest

/// The README's two Spark examples, run as written with the packaged binary as `imgfetch` on PATH
/// (executors have no Swift toolchain): `Scripts/spark-fetch` on a CSV, then `spark-submit` with
/// `--imgfetch imgfetch` on the Parquet results of the first. Substituted, as a reader would: the
/// test server for the table's hosts, `local[2]` for the YARN master, the first run's
/// `results.parquet` for `s3a://bucket/urls.parquet`, and the test's directory for `/shared`.
final class DocumentedSparkExampleTests: XCTestCase {
    func testTheSparkExamplesRunAsWritten() throws {
        let packaged = try PackagedArtifacts()
        let root = TestServer.packageRoot
        let venv = root.appendingPathComponent(".venv-spark/bin")
        guard FileManager.default.isExecutableFile(atPath: venv.appendingPathComponent("python").path) else {
            return XCTFail("no pyspark at \(venv.path): run Scripts/install-deps --with-spark")
        }
        let server = try TestServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let names = try server.addSamples(count: 2)
        let rows = names.enumerated().map { "\(server.url("/files/" + $0.element)),photo \($0.offset)" }
        _ = try scratch.write("photos.csv", (["url,caption"] + rows).joined(separator: "\n") + "\n")

        let blocks = try DocumentedExampleTests.readmeBlocks().filter {
            $0.text.hasPrefix("Scripts/spark-fetch ") || $0.text.hasPrefix("# on a cluster: the same file with spark-submit")
        }
        XCTAssertEqual(blocks.count, 2, "the README's Spark examples")
        let shared = scratch.url.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        var outputs: [String] = []
        for block in blocks {
            // A line of what the command prints is no command.
            var script = block.text.split(separator: "\n").filter { !$0.hasPrefix("spark-fetch:") }.joined(separator: "\n")
            script = script.replacingOccurrences(of: "--master yarn", with: "--master local[2]")
                .replacingOccurrences(of: "s3a://bucket/urls.parquet", with: shared.path + "/shards/results.parquet")
                .replacingOccurrences(of: " /shared/", with: " " + shared.path + "/")
                .replacingOccurrences(of: "deploy/spark/", with: root.path + "/deploy/spark/")
                .replacingOccurrences(of: "Scripts/spark-fetch", with: root.path + "/Scripts/spark-fetch")
            let environment = [
                "PATH": [packaged.binary.deletingLastPathComponent().path, venv.path, "/usr/bin", "/bin"].joined(separator: ":"),
                "HOME": scratch.path, "LANG": "C.UTF-8",
                // What a cluster's Spark is configured with: the executors' Python.
                "PYSPARK_PYTHON": venv.appendingPathComponent("python").path,
            ]
            let run = try ImgFetchRunner.run(["-c", "set -euo pipefail\n" + script], in: scratch.url, environment: environment,
                                             executable: URL(fileURLWithPath: "/bin/bash"), timeout: 600)
            XCTAssertEqual(run.exitCode, 0, "README.md:\(block.line)\n\(script)\n\(run.stderr.suffix(3000))")
            outputs.append(run.stdout + run.stderr)
        }
        XCTAssertTrue(outputs[0].contains("spark-fetch: 4 items: 4 saved, 0 failed"), outputs[0])
        XCTAssertTrue(FileManager.default.fileExists(atPath: shared.appendingPathComponent("shards/results.parquet").path))
        XCTAssertTrue(outputs[1].contains("spark-fetch: 4 items: 4 saved, 0 failed"), outputs[1])
        // Each partition's worker writes into its part-K directory.
        let saved = (FileManager.default.enumerator(atPath: shared.appendingPathComponent("out").path)?.allObjects as? [String] ?? [])
            .map { String($0.split(separator: "/").last ?? "") }.filter { names.contains($0) }
        XCTAssertEqual(saved.sorted(), names.sorted(), "spark-submit's run saved every image")
    }
}
