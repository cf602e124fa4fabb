import Foundation
import XCTest

/// Exit code 2 and the messages of usage errors; --help and --version.
final class UsageTests: XCTestCase {
    func testUnknownOptionExits2WithAHint() throws {
        let result = try ImgFetchRunner.run(["--frobnicate"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains("'--frobnicate'"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--help"), result.stderr)
    }

    func testMalformedValueExits2() throws {
        let result = try ImgFetchRunner.run(["-j", "lots", "list.txt"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertTrue(result.stderr.contains("'-j'"), result.stderr)
    }

    func testMissingListExits2() throws {
        let result = try ImgFetchRunner.run(["/nonexistent/list.txt"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertTrue(result.stderr.contains("cannot read list '/nonexistent/list.txt'"), result.stderr)
        XCTAssertFalse(result.stderr.contains("http://"), result.stderr)
        // A URL typed without its scheme is no file either: the error says how to make it a URL.
        let bare = try ImgFetchRunner.run(["127.0.0.1:18080/x.jpg"])
        XCTAssertEqual(bare.exitCode, 2)
        XCTAssertEqual(bare.stderr, "imgfetch: cannot read list '127.0.0.1:18080/x.jpg': No such file or directory; "
                       + "to fetch it as a URL, add http:// or https:// in front\n")
    }

    func testUnwritableOutputDirectoryExits2() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let blocker = try scratch.write("file", "not a directory")
        let result = try ImgFetchRunner.run(["-o", blocker + "/sub"], stdin: "")
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertTrue(result.stderr.contains("cannot create output directory '\(blocker)/sub': Not a directory"), result.stderr)
    }

    func testHelpAndVersion() throws {
        let help = try ImgFetchRunner.run(["--help"])
        XCTAssertEqual(help.exitCode, 0)
        XCTAssertTrue(help.stdout.contains("--concurrency"))
        XCTAssertLessThanOrEqual(help.stdout.split(separator: "\n", omittingEmptySubsequences: false).count - 1, 60, "one screen")
        let all = try ImgFetchRunner.run(["--help", "all"])
        XCTAssertEqual(all.exitCode, 0)
        XCTAssertTrue(all.stdout.contains("Exit status:"), all.stdout)
        XCTAssertTrue(all.stdout.contains("--per-host"), all.stdout)
        XCTAssertEqual(try ImgFetchRunner.run(["-h", "imgaes"]).stderr,
                       "imgfetch: invalid value 'imgaes' for '-h': topics are all, input, output, images, transfers, requests, "
                           + "reporting, datasets, cluster, information; did you mean 'images'?\nTry 'imgfetch --help' for more information.\n")
        let version = try ImgFetchRunner.run(["--version"])
        XCTAssertEqual(version.exitCode, 0)
        XCTAssertTrue(version.stdout.hasPrefix("imgfetch "), version.stdout)
        XCTAssertTrue(version.stdout.contains(" (libcurl/"), version.stdout)
    }

    func testEmptyListSucceeds() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let result = try ImgFetchRunner.run(["-o", scratch.path], stdin: "# nothing\n\n")
        XCTAssertEqual(result.exitCode, 0)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains("0 items"), result.stderr)
    }
}
