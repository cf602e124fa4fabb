import Foundation
import XCTest

/// The drop-in promise, tried as an img2dataset user would: img2dataset (in its venv, `.bench/venv`,
/// which `Scripts/install-deps` makes) and imgfetch build shards from the same LAION-shaped Parquet
/// file with the same options, and one training loader (`Scripts/test-support/loader.py`:
/// `meta["similarity"] > 0.3`, a fixed-size batch collate, the caption) reads both and sees the same
/// samples, sizes, captions and typed columns.
final class Img2datasetLoaderTests: EndToEndTestCase {
    private let root = TestServer.packageRoot

    private func loader(_ shards: String) throws -> [String: Any] {
        // Row i's similarity is 0.25 + i/1000: rows 8 and on are kept.
        let run = try ImgFetchRunner.run([root.appendingPathComponent("Scripts/test-support/loader.py").path, shards, "--threshold", "0.2575"],
                                         executable: root.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    func testOneLoaderReadsBothToolsShardsTheSame() throws {
        // Images from 16 to 256 px, PNG and JPEG: some are enlarged to 64, some shrunk.
        let samples = try server.addSamples(count: 8, seed: 11)
        for (i, name) in samples.enumerated() { _ = try server.addFile("img\(i).jpg", try server.fileData(name)) }
        let list = scratch.file("laion-part.parquet").path
        let made = try ImgFetchRunner.run([root.appendingPathComponent("Scripts/test-support/make_parquet.py").path, list,
                                           "--rows", String(samples.count), "--url-base", server.url("/files"), "--no-nulls"],
                                          executable: root.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(made.exitCode, 0, made.stderr)

        let img2dataset = root.appendingPathComponent(".bench/venv/bin/img2dataset")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: img2dataset.path), "Scripts/install-deps makes .bench/venv")
        let theirs = scratch.file("img2dataset").path
        let their = try ImgFetchRunner.run(["--url_list", list, "--input_format", "parquet", "--url_col", "url", "--caption_col", "caption",
                                            "--output_format", "webdataset", "--output_folder", theirs, "--image_size", "64",
                                            "--resize_mode", "center_crop", "--processes_count", "1", "--thread_count", "4",
                                            "--save_additional_columns", "[\"similarity\",\"punsafe\"]", "--enable_wandb", "False"],
                                           executable: img2dataset)
        XCTAssertEqual(their.exitCode, 0, their.stderr)
        let mine = try ImgFetchRunner.run([list, "--caption-column", "caption", "--output-format", "webdataset", "--resize", "64",
                                           "--fit", "center-crop", "--save-as", "jpeg", "-o", outputDirectory, "-q"])
        XCTAssertEqual(mine.exitCode, 0, mine.stderr)

        let fromTheirs = try loader(theirs), fromMine = try loader(outputDirectory)
        XCTAssertGreaterThanOrEqual(fromMine["kept"] as? Int ?? 0, 8, "enough samples over the threshold for two batches: \(fromMine)")
        XCTAssertEqual(fromMine["kept"] as? Int, fromTheirs["kept"] as? Int)
        XCTAssertEqual(fromMine["batches"] as? [[Int]], fromTheirs["batches"] as? [[Int]])
        let mineSamples = try XCTUnwrap(fromMine["samples"] as? [[String: Any]])
        let theirSamples = try XCTUnwrap(fromTheirs["samples"] as? [[String: Any]])
        XCTAssertEqual(mineSamples.count, theirSamples.count)
        for (a, b) in zip(mineSamples, theirSamples) {
            XCTAssertEqual(a as NSDictionary, b as NSDictionary)
        }
    }
}
