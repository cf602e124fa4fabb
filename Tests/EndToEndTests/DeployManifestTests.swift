import Foundation
import XCTest

/// `deploy/k8s/indexed-job.yaml` and `deploy/slurm/fetch.sbatch`, run as their engines would
/// (`Scripts/check-deploy.py`): every URL of the shared list fetched exactly once across the shards.
final class DeployManifestTests: XCTestCase {
    func testTheManifestsWorkersCoverTheListExactlyOnce() throws {
        let root = TestServer.packageRoot
        let run = try ImgFetchRunner.run([root.appendingPathComponent("Scripts/check-deploy.py").path, "--imgfetch", ImgFetchRunner.binary.path],
                                         executable: root.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("each fetched once, under both"), run.stdout)
    }
}
