import Foundation
import XCTest

/// `Scripts/test-support/golden_outputs.py`, the golden comparison of a change that must not
/// change behaviour, run with this build on both sides: two runs of one build, on the same input
/// against the same servers, leave the same bytes in every mode (files, a re-run, pixels, shards,
/// the store). That is the reproducibility `docs/DATASETS.md` promises, and it keeps the tool
/// itself honest (a difference it could not take out would fail here first).
final class GoldenOutputsTests: XCTestCase {
    func testTwoRunsOfOneBuildLeaveTheSameBytesInEveryMode() throws {
        guard FileManager.default.isExecutableFile(atPath: S3TestStore.python.path) else {
            throw XCTSkip("no venv at \(S3TestStore.python.path): run Scripts/install-deps")
        }
        let script = TestServer.packageRoot.appendingPathComponent("Scripts/test-support/golden_outputs.py").path
        let binary = ImgFetchRunner.binary.path
        let run = try ImgFetchRunner.run([script, "--before", binary, "--after", binary], executable: S3TestStore.python)
        XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        // Every mode ran, each leaving outputs to compare.
        XCTAssertTrue(run.stdout.contains("over 4 modes, 0 differ"), run.stdout)
        let compared = run.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        XCTAssertGreaterThan(compared, 60, run.stdout)
    }
}
