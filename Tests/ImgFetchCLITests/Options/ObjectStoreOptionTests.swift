import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// `-o s3://…` and `--work-dir` on the command line, and where a run's objects go.
final class ObjectStoreOptionTests: XCTestCase {
    private let keys = ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"]

    func testAnS3OutputWorksInTheDefaultWorkDirectoryUnderTMPDIR() throws {
        let options = try OptionParser.parse(["-o", "s3://pics/runs/1/"], environment: keys.merging(["TMPDIR": "/scratch/"]) { $1 })
        XCTAssertEqual(options.objectStore, S3Location(bucket: "pics", prefix: "runs/1"))
        XCTAssertEqual(options.outputDirectory, "/scratch/imgfetch-s3/pics/runs/1")
        XCTAssertEqual(options.objectStoreAccess?.credentials.sourceName, "the environment (AWS_ACCESS_KEY_ID)")
        XCTAssertEqual(try OptionParser.parse(["-o", "s3://pics"], environment: keys).outputDirectory, "/tmp/imgfetch-s3/pics")
        let given = try OptionParser.parse(["--work-dir", "w", "-o", "s3://pics/x"], environment: keys)
        XCTAssertEqual(given.outputDirectory, "w")
        // The last -o wins, as for every option.
        let local = try OptionParser.parse(["-o", "s3://pics/x", "-o", "out"], environment: keys)
        XCTAssertNil(local.objectStore)
        XCTAssertEqual(local.outputDirectory, "out")
    }

    func testHelpAndVersionNeedNoCredentials() throws {
        XCTAssertEqual(try OptionParser.parse(["-o", "s3://pics/x", "--help"]).action, .help(.brief))
    }

    func testObjectNamesAreTheFilesPathsInTheWorkDirectory() throws {
        let options = try OptionParser.parse(["-o", "s3://pics/r", "--work-dir", "/w/"], environment: keys)
        let output = try XCTUnwrap(ObjectStoreOutput(options))
        XCTAssertEqual(output.name(ofLocal: "/w/a.jpg"), "a.jpg")
        XCTAssertEqual(output.name(ofLocal: "/w/sub/a.jpg"), "sub/a.jpg")
        XCTAssertNil(output.name(ofLocal: "/other/a.jpg"))
        XCTAssertNil(output.name(ofLocal: "/w"), "the directory itself")
        XCTAssertEqual(output.name(ofLocal: "/w/\u{301}a.jpg"), "\u{301}a.jpg", "compared as bytes")
        let here = try XCTUnwrap(ObjectStoreOutput(try OptionParser.parse(["-o", "s3://pics", "--work-dir", "."], environment: keys)))
        XCTAssertEqual(here.name(ofLocal: "a.jpg"), "a.jpg")
        XCTAssertNil(here.name(ofLocal: "../a.jpg"))
        XCTAssertNil(ObjectStoreOutput(try OptionParser.parse(["-o", "out"])))
    }

    func testObjectsAreTypedByTheirExtension() {
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "a.JPG"), "image/jpeg")
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "a.webp"), "image/webp")
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "000001.tar"), "application/x-tar")
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "000001_stats.json"), "application/json")
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "000001.jsonl"), "application/x-ndjson")
        XCTAssertEqual(ObjectStoreOutput.contentType(of: "noext"), "application/octet-stream")
    }
}
