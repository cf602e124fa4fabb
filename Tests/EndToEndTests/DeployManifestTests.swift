import Foundation
import XCTest

/// `deploy/k8s/indexed-job.yaml` and `deploy/slurm/fetch.sbatch`, run as their engines would
/// (`Scripts/test-support/check_deploy.py`): every URL of the shared list fetched exactly once across the
/// shards. The Kubernetes pods run in the image `Scripts/package --image` built, the Slurm tasks
/// the packaged binary, where the Swift toolchain cannot be seen (`Scripts/test-support/without-toolchain`).
/// Then the failure paths: 75 and a killed pod retried, 2 not.
final class DeployManifestTests: XCTestCase {
    func testTheManifestsWorkersCoverTheListExactlyOnce() throws {
        let packaged = try PackagedArtifacts()
        let image = try XCTUnwrap(packaged.image, "IMGFETCH_IMAGE is not set (Scripts/test builds the image and sets it)")
        let root = TestServer.packageRoot
        // Where podman cannot start containers, the pods' command runs the packaged binary itself.
        let podmanRuns = try ImgFetchRunner.runShell("podman run --rm '\(image)' --version").exitCode == 0
        if !podmanRuns { print("DeployManifestTests: podman cannot run containers here; the pods run the packaged binary") }
        let run = try ImgFetchRunner.run([root.appendingPathComponent(".venv-tests/bin/python").path,
                                          root.appendingPathComponent("Scripts/test-support/check_deploy.py").path,
                                          "--imgfetch", packaged.binary.path] + (podmanRuns ? ["--image", image] : []),
                                         executable: root.appendingPathComponent("Scripts/test-support/without-toolchain"), timeout: 600)
        XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("each fetched once, under both" + (podmanRuns ? " (the pods in \(image))" : "")), run.stdout)
        XCTAssertTrue(run.stdout.contains("75 and a killed pod retried, 2 not"), run.stdout)
    }
}
