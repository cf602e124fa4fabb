import Foundation
import XCTest

/// Parquet lists, as LAION's parts are written (pyarrow, Snappy, dictionary-encoded URLs, nulls,
/// typed columns): read by name with no flag, in files mode and into shards; a directory of part
/// files; and what cannot be read, said before any request.
final class ParquetInputTests: EndToEndTestCase {
    private func parquet(_ name: String, rows: Int, _ options: [String] = []) throws -> String {
        let out = scratch.file(name).path
        let run = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/make_parquet.py").path, out,
                                          "--rows", String(rows), "--url-base", server.url("/files")] + options,
                                         executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        return out
    }

    private func jsonLines(_ execution: Execution) throws -> [[String: Any]] {
        try execution.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    private func addImages(_ count: Int) throws {
        let jpeg = try addJPEG("seed.jpg")
        for i in 0..<count { try server.addFile("img\(i).jpg", jpeg) }
    }

    func testAParquetListIsReadByItsNameWithTypedColumns() throws {
        try addImages(20)
        let list = try parquet("photos.parquet", rows: 20, ["--row-group-rows", "8"])
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--caption-column", "caption", "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let lines = try jsonLines(run)
        XCTAssertEqual(lines.count, 20)
        let row = try XCTUnwrap(lines.first { ($0["line"] as? [String: Any])?["line"] as? Int == 4 })
        XCTAssertEqual(row["status"] as? String, "saved")
        XCTAssertEqual((row["line"] as? [String: Any])?["file"] as? String, list)
        XCTAssertTrue(row["caption"] is NSNull, "row 4 (index 3) has a null caption")
        let columns = try XCTUnwrap(row["columns"] as? [String: Any])
        XCTAssertEqual(columns["width"] as? Int, 640)
        XCTAssertEqual(columns["similarity"] as? Double ?? 0, 0.253, accuracy: 1e-6)
        XCTAssertEqual(columns["key"] as? String, "000000003")
        XCTAssertEqual(try outputFiles().count, 20)
    }

    func testADirectoryOfPartFilesIntoShards() throws {
        try addImages(12)
        try FileManager.default.createDirectory(at: scratch.file("parts"), withIntermediateDirectories: true)
        // Two parts of the same rows' shape, in name order; another file is not a part.
        _ = try parquet("parts/part-00000.parquet", rows: 6, ["--codec", "zstd"])
        _ = try parquet("parts/part-00001.parquet", rows: 6, ["--codec", "gzip", "--page-version", "2.0"])
        _ = try scratch.write("parts/_SUCCESS", "")
        let run = try ImgFetchRunner.run([scratch.file("parts").path, "--input-format", "parquet", "--caption-column", "caption",
                                          "--output-format", "webdataset", "--resize", "16", "--fit", "center-crop",
                                          "-o", outputDirectory, "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        let lines = try jsonLines(run)
        XCTAssertEqual(lines.count, 12)
        XCTAssertEqual(Set(lines.compactMap { ($0["line"] as? [String: Any])?["file"] as? String }.map { URL(fileURLWithPath: $0).lastPathComponent }),
                       ["part-00000.parquet", "part-00001.parquet"])
        let members = try ImgFetchRunner.run(["-tf", outputDirectory + "/000000.tar"], executable: URL(fileURLWithPath: "/bin/tar"))
        XCTAssertEqual(members.stdout.split(separator: "\n").filter { $0.hasSuffix(".jpg") }.count, 12, members.stdout)
    }

    func testWhatCannotBeReadIsSaidBeforeAnyRequest() throws {
        try addImages(3)
        let list = try parquet("photos.parquet", rows: 3)
        let noColumn = try ImgFetchRunner.run([list, "--url-column", "link", "-o", outputDirectory])
        XCTAssertEqual(noColumn.exitCode, 2)
        XCTAssertTrue(noColumn.stderr.contains("has no column 'link' for the URLs"), noColumn.stderr)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: list))
        let cut = try scratch.write("cut.parquet", "")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let truncated = try ImgFetchRunner.run([cut, "-o", outputDirectory])
        XCTAssertEqual(truncated.exitCode, 2)
        XCTAssertEqual(truncated.stderr, "imgfetch: cannot read list '\(cut)': truncated Parquet: the file ends inside its footer (no PAR1 at its end)\n")
        let text = try scratch.write("text.parquet", "url\nhttp://example.com/a.jpg\n")
        XCTAssertTrue(try ImgFetchRunner.run([text, "-o", outputDirectory]).stderr.contains("not a Parquet file: no PAR1 at its start"))
        let stdin = try ImgFetchRunner.run(["-", "--input-format", "parquet", "-o", outputDirectory], stdin: "")
        XCTAssertEqual(stdin.exitCode, 2)
        XCTAssertTrue(stdin.stderr.contains("a Parquet list cannot be read from stdin"), stdin.stderr)
        XCTAssertEqual(try server.requests(to: "/files/").count, 0)
    }
}
