import Foundation
import XCTest

/// `-j` up to 1024 (issue 13): the soft open-file limit is raised to fit, and a hard limit that
/// cannot fit stops the run before any request.
final class OpenFileLimitTests: EndToEndTestCase {
    func testLowSoftLimitIsRaisedForHighConcurrency() throws {
        let jpeg = try addJPEG("a.jpg")
        let lines = (1...300).map { server.url("/files/a.jpg?n=\($0)") + " out=a-\($0).jpg" }
        let list = try scratch.write("urls.txt", lines.joined(separator: "\n") + "\n")
        // 64 open files could not hold 300 sockets and temp files at once; the hard limit allows more.
        let run = try ImgFetchRunner.runShell("ulimit -Sn 64 && exec '\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -q -j 300")
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(run.stderr, "")
        XCTAssertEqual(try outputFiles().count, 300)
        XCTAssertEqual(try outputData("a-300.jpg"), jpeg)
    }

    func testHardLimitTooLowForConcurrencyIsAUsageError() throws {
        let list = try scratch.write("urls.txt", server.url("/files/a.jpg") + "\n")
        let run = try ImgFetchRunner.runShell("ulimit -n 200 && exec '\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' -j 1024")
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.stderr, "imgfetch: -j 1024 needs up to 2624 open files, but the limit is 200 (ulimit -Hn); "
                       + "use a lower -j or raise the limit\n")
        XCTAssertEqual(try server.requests().count, 0)
    }
}
