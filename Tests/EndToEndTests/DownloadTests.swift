import Foundation
import XCTest

/// The main job: a list of URLs becomes files, byte for byte.
final class DownloadTests: EndToEndTestCase {
    func testSavesEveryFileByteForByte() throws {
        let names = try server.addSamples(count: 100)
        XCTAssertEqual(names.count, 200)
        let result = try fetch(names.map { server.url("/files/\($0)") }, ["-j", "16"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.count, 200)
        XCTAssertTrue(result.results.allSatisfy { $0[0] == "saved" }, result.stdout)
        XCTAssertEqual(try outputFiles(), names)
        for name in names {
            XCTAssertEqual(try outputData(name), try server.fileData(name), name)
        }
        XCTAssertTrue(result.stderr.contains("200 items: 200 saved, 0 skipped, 0 failed"), result.stderr)
    }

    func testResultLineNamesTheSavedPath() throws {
        _ = try addJPEG("cat.jpg")
        let url = server.url("/files/cat.jpg")
        let result = try fetch([url])
        XCTAssertEqual(result.result(for: url), ["saved", url, outputDirectory + "/cat.jpg"])
    }

    func testURLsGivenAsArgumentsAreFetchedAsCurlAndWgetTakeThem() throws {
        let cat = try addJPEG("cat.jpg")
        let dog = try addJPEG("dog.jpg")
        _ = try addJPEG("listed.jpg")
        let list = try scratch.write("urls.txt", server.url("/files/listed.jpg") + "\n")
        let output = scratch.file("args")
        // URLs and a list, mixed; stdin is not read when any argument is given.
        let result = try ImgFetchRunner.run([server.url("/files/cat.jpg"), list, server.url("/files/dog.jpg").replacingOccurrences(of: "http://", with: "HTTP://"),
                                             "-o", output.path, "--jsonl"], stdin: server.url("/files/never.jpg") + "\n")
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map { String($0) }
        XCTAssertEqual(lines.count, 3, result.stdout)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("cat.jpg")), cat)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("dog.jpg")), dog)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent("listed.jpg").path))
        XCTAssertTrue(result.stdout.contains(#""line":{"file":"<arguments>","line":1}"#), result.stdout)
        XCTAssertTrue(result.stdout.contains(#""line":{"file":"<arguments>","line":3}"#), result.stdout)

        // A bad URL argument is a failed item named by its place, like a bad list line.
        let bad = try ImgFetchRunner.run(["http://", "-o", output.path])
        XCTAssertEqual(bad.exitCode, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("<arguments>:1:"), bad.stderr)

        // A list file whose name begins like a URL is read as a list with ./ in front.
        try FileManager.default.createDirectory(at: scratch.file("http:"), withIntermediateDirectories: true)
        _ = try scratch.write("http:/list.txt", server.url("/files/cat.jpg") + "\n")
        let odd = try ImgFetchRunner.run(["./http:/list.txt", "-o", scratch.file("odd").path], in: scratch.url)
        XCTAssertEqual(odd.exitCode, 0, odd.stderr)
        XCTAssertEqual(odd.result(for: server.url("/files/cat.jpg"))?[0], "saved", odd.stdout)
    }

    func testAListWithNoURLsSaysSo() throws {
        let list = try scratch.write("empty.txt", "# only a comment\n\n")
        let result = try ImgFetchRunner.run([list, "-o", outputDirectory])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("imgfetch: warning: no URLs in \(list): nothing but blank lines and # comments"),
                      result.stderr)
        // One list with a URL is enough; and a shard that gets none of a list's URLs is no empty list.
        _ = try addJPEG("a.jpg")
        let full = try scratch.write("full.txt", server.url("/files/a.jpg") + "\n")
        XCTAssertFalse(try ImgFetchRunner.run([list, full, "-o", outputDirectory]).stderr.contains("no URLs"))
        XCTAssertFalse(try ImgFetchRunner.run([full, "-o", outputDirectory, "--shard", "2/2"]).stderr.contains("no URLs"))
    }

    func testReadsTheListFromStdin() throws {
        let data = try addJPEG("a.jpg")
        let url = server.url("/files/a.jpg")
        // No list argument and "-" both mean stdin.
        for (index, lists) in [[], ["-"]].enumerated() {
            let output = scratch.file("out\(index)")
            let result = try ImgFetchRunner.run(lists + ["-o", output.path], stdin: "# from a pipe\n\(url)\n")
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(result.result(for: url)?[0], "saved")
            XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("a.jpg")), data)
        }
    }

    func testReadsSeveralListsInOrder() throws {
        _ = try addJPEG("a.jpg")
        _ = try addJPEG("b.jpg")
        let first = try scratch.write("one.txt", server.url("/files/a.jpg") + "\n")
        let second = try scratch.write("two.txt", "bad line\n" + server.url("/files/b.jpg") + "\n")
        let result = try ImgFetchRunner.run([first, second, "-o", outputDirectory])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(try outputFiles(), ["a.jpg", "b.jpg"])
        XCTAssertTrue(result.stderr.contains("\(second):1: "), result.stderr)
    }

    func testFollowsRedirectsAndNamesFromTheOriginalURL() throws {
        let data = try addJPEG("target.jpg")
        let url = server.url("/redirect/3/files/target.jpg")
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        // The name comes from the list's URL (last segment "target.jpg" here too), never the redirect target.
        XCTAssertEqual(try outputData("target.jpg"), data)
        XCTAssertEqual(try server.requests(to: "/redirect/").map(\.path),
                       (0...3).reversed().map { "/redirect/\($0)/files/target.jpg" })
    }

    func testNameComesFromTheListURLNotTheRedirectTarget() throws {
        let data = try addJPEG("real-name.jpg")
        let target = server.url("/files/real-name.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = server.url("/redirect-to?url=\(target)")
        let result = try fetch([url])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputFiles(), ["redirect-to.jpg"])
        XCTAssertEqual(try outputData("redirect-to.jpg"), data)
    }

    func testAddsTheSniffedExtensionAndDisambiguatesNames() throws {
        let png = try server.fileData(try server.addSamples(count: 1).first { $0.hasSuffix(".png") }!)
        try server.addFile("picture", png)
        try server.addFile("a.png", png)
        let urls = [server.url("/files/picture"), server.url("/files/a.png"), server.url("/redirect/0/files/a.png")]
        let result = try fetch(urls)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let files = try outputFiles()
        XCTAssertTrue(files.contains("picture.png"), "\(files)")
        XCTAssertTrue(files.contains("a.png"), "\(files)")
        // The later URL that wants "a.png" gets a suffix from its URL's hash: the same on every run.
        let suffixed = files.filter { $0.hasPrefix("a-") && $0.hasSuffix(".png") }
        XCTAssertEqual(suffixed.count, 1, "\(files)")
        XCTAssertEqual(result.result(for: urls[2])?[2], outputDirectory + "/" + suffixed[0])
        XCTAssertEqual(suffixed[0].count, "a-12345678.png".count)
    }

    func testHashNaming() throws {
        let data = try addJPEG("x.jpg")
        let url = server.url("/files/x.jpg")
        let result = try fetch([url], ["--name", "hash"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let files = try outputFiles()
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files[0].count, 64 + 4)
        XCTAssertTrue(files[0].hasSuffix(".jpg"))
        XCTAssertEqual(try outputData(files[0]), data)
    }

    func testExplicitOutName() throws {
        let data = try addJPEG("x.jpg")
        let result = try fetch([server.url("/files/x.jpg") + " out=chosen-name.jpeg priority=high"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputFiles(), ["chosen-name.jpeg"])
        XCTAssertEqual(try outputData("chosen-name.jpeg"), data)
    }

    func testAcceptsAJPEGServedAsHTML() throws {
        _ = try addJPEG("x.jpg")
        let result = try fetch([server.url("/type/text%2Fhtml/files/x.jpg")])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputFiles(), ["x.jpg"])
    }
}
