import XCTest
@testable import ImgFetchCLI

/// An img2dataset command line is answered with imgfetch's, which parses and does the same.
final class Img2datasetCommandLineTests: XCTestCase {
    func testATypicalCommandLineBecomesImgfetchsWhole() throws {
        let theirs = ["--url_list", "laion.parquet", "--input_format", "parquet", "--url_col", "url", "--caption_col", "caption",
                      "--output_format", "webdataset", "--image_size", "256", "--resize_mode", "border", "--processes_count", "4",
                      "--thread_count", "64", "--min_image_size", "64", "--compute_hash", "md5",
                      "--verify_hash", #"["sha256","sha256"]"#, "--extract_exif", "True", "--output_folder", "out"]
        let translation = try XCTUnwrap(Img2datasetCommandLine.translate(theirs))
        XCTAssertEqual(translation.first, "--url_list")
        XCTAssertEqual(translation.arguments, ["laion.parquet", "--input-format", "parquet", "--caption-column", "caption",
                                               "--output-format", "webdataset", "--resize", "256", "--fit", "pad",
                                               "--concurrency", "64", "--min-size", "64", "--hash", "md5",
                                               "--verify-hash", "sha256", "--extract-exif", "--output-dir", "out"])
        XCTAssertEqual(translation.defaults, [])
        XCTAssertEqual(translation.leftOut, ["--processes_count 4: one process runs the transfers (-j) and the decodes, on every core"])
        let options = try OptionParser.parse(translation.arguments + translation.defaults)
        XCTAssertEqual(options.filter.minSide, 64)
        XCTAssertEqual(options.verifyHash, HashVerification(column: "sha256", algorithm: .sha256))
    }

    func testImg2datasetsDefaultsAreSpelledOut() throws {
        // img2dataset shrinks to 256 with borders by default, writes JPEG, and records EXIF in a dataset.
        let files = try XCTUnwrap(Img2datasetCommandLine.translate(["--url_list=urls.txt", "--output_folder=pics"]))
        XCTAssertEqual(files.arguments + files.defaults, ["urls.txt", "--output-dir", "pics", "--resize", "256", "--fit", "pad",
                                                         "--save-as", "jpeg"])
        XCTAssertNoThrow(try OptionParser.parse(files.arguments + files.defaults))
        let shards = try XCTUnwrap(Img2datasetCommandLine.translate(["urls.txt", "--output_format", "webdataset", "--encode_format", "jpg",
                                                                     "--verify_hash", "[md5_col,md5]", "--extract_exif", "False"]))
        XCTAssertEqual(shards.arguments, ["urls.txt", "--output-format", "webdataset", "--save-as", "jpeg", "--verify-hash", "md5_col:md5"])
        XCTAssertEqual(shards.defaults, ["--resize", "256", "--fit", "pad"])
        // resize_mode no: no --resize at all.
        let none = try XCTUnwrap(Img2datasetCommandLine.translate(["urls.txt", "--image_size", "64", "--resize_mode", "no"]))
        XCTAssertEqual(none.arguments + none.defaults, ["urls.txt"])
        XCTAssertTrue(Img2datasetCommandLine.message(shards).contains("imgfetch urls.txt --output-format webdataset --save-as jpeg"))
    }

    func testOneSlipInImgfetchsOwnCommandLineIsLeftToTheParser() {
        XCTAssertNil(Img2datasetCommandLine.translate(["urls.txt", "-o", "pics", "--thread_count", "8"]))
        XCTAssertNil(Img2datasetCommandLine.translate(["urls.txt", "--timeout", "5", "--retries", "1"]), "imgfetch's own options")
        XCTAssertThrowsError(try OptionParser.parse(["urls.txt", "--thread_count", "8"])) { error in
            XCTAssertEqual((error as? UsageError)?.suggestion, "--concurrency")
        }
    }
}
