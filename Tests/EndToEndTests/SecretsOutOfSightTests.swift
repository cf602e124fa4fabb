import Foundation
import XCTest

/// Credentials given where `ps` cannot read them: a password asked for on the terminal (`-u USER`),
/// headers read from a file (`-H @FILE`), and a netrc file (`--netrc-file`), each checked at the
/// server and in every output. (`SecretsInArgvTests` holds the masking of argv; the transport tests
/// `testSecretsNeverAppearInAnyOutput`, the rest of the outputs.)
final class SecretsOutOfSightTests: EndToEndTestCase {
    private let password = "pa55-W0rd-8f3a"

    func testAPasswordAskedOnTheTerminalIsSentAndNeverShown() throws {
        let data = try addJPEG("a.jpg")
        let session = "imgfetch-prompt-\(getpid())"
        defer { TmuxSession.kill(session) }
        let status = scratch.file("status").path
        let command = "'\(ImgFetchRunner.binary.path)' -u bob '\(server.url("/auth/bob/\(password)/files/a.jpg"))' "
            + "-o '\(outputDirectory)' --progress plain --report '\(scratch.file("report.jsonl").path)'; echo \"exit $?\" > '\(status)'; sleep 30"
        try TmuxSession.start(session, command)
        let prompted = try eventually(timeout: 15) { try TmuxSession.screen(session).contains("Enter host password for user 'bob':") }
        let screenThen = try TmuxSession.screen(session)
        XCTAssertTrue(prompted, screenThen)
        XCTAssertEqual(try server.requests().count, 0, "nothing is fetched before the password is given")
        try TmuxSession.keys(session, "-l", password)
        try TmuxSession.keys(session, "Enter")
        XCTAssertTrue(eventually(timeout: 20) { FileManager.default.fileExists(atPath: status) })
        let screenNow = try TmuxSession.screenAndScrollback(session)
        XCTAssertEqual(try String(contentsOfFile: status, encoding: .utf8), "exit 0\n", screenNow)
        XCTAssertEqual(try outputData("a.jpg"), data)
        // Typed without echo: the screen (the start line's arguments included) and the report never
        // show it, but in the URL the test put it in for the server to check.
        let screen = try TmuxSession.screenAndScrollback(session).replacingOccurrences(of: "\n", with: "")
        XCTAssertTrue(screen.contains("start: imgfetch") && screen.contains("-u bob") && screen.contains("1 saved"), screen)
        XCTAssertFalse(screen.replacingOccurrences(of: "/\(password)/", with: "/").contains(password), screen)
        let report = try String(contentsOfFile: scratch.file("report.jsonl").path, encoding: .utf8)
        XCTAssertFalse(report.replacingOccurrences(of: "/\(password)/", with: "/").contains(password), report)
    }

    func testWithoutATerminalAUserWithoutAPasswordIsAUsageError() throws {
        // setsid: no controlling terminal, as under cron or in a pipeline of a job.
        let run = try ImgFetchRunner.run(["--wait", ImgFetchRunner.binary.path, "-u", "bob", server.url("/files/a.jpg"), "-o", outputDirectory],
                                         executable: URL(fileURLWithPath: "/usr/bin/setsid"))
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("names user 'bob' without a password, and there is no terminal"), run.stderr)
        XCTAssertEqual(try server.requests().count, 0)
    }

    func testHeadersFromAFileAreSentAndNeitherArgvNorOutputsShowThem() throws {
        let data = try addJPEG("b.jpg")
        let file = try scratch.write("headers.txt", "# the API's token\nX-Token: \(password)\r\n\nX-Second: two\n")
        let list = try scratch.write("urls.txt", server.url("/require-header/X-Token/\(password)/require-header/X-Second/two/files/b.jpg") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "-H", "@" + file, "--jsonl", "--progress", "plain"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try outputData("b.jpg"), data)
        XCTAssertFalse((run.stdout + run.stderr).replacingOccurrences(of: "/\(password)/", with: "/").contains(password),
                       "the token appears only in the URL the test put it in")
        let broken = try scratch.write("broken.txt", "X-Token: \(password)\nno colon here\n")
        let refused = try ImgFetchRunner.run([list, "-o", outputDirectory, "-H", "@" + broken])
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("broken.txt:2: expected 'Name: value'"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains(password), refused.stderr)
    }

    func testANetrcFileGivesEachHostItsOwnCredentials() throws {
        let data = try addJPEG("c.jpg")
        let other = try TestServer(bind: "127.0.0.2")
        defer { other.stop() }
        _ = try other.addFile("d.jpg", data)
        let netrc = try scratch.write("netrc", "machine 127.0.0.1 login bob password \(password)\nmachine 127.0.0.2 login eve password other\n")
        // A redirect to the other host gets that host's entry, never the first host's.
        let hop = server.url("/auth/bob/\(password)/redirect-to?url=" + "http://127.0.0.2:\(other.port)/auth/eve/other/files/d.jpg"
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        let run = try fetch([server.url("/auth/bob/\(password)/files/c.jpg"), hop], ["--netrc-file", netrc, "--jsonl"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try outputData("c.jpg"), data)
        let secondHost = try other.requests().compactMap { $0.header("Authorization") }
        XCTAssertEqual(secondHost, ["Basic " + Data("eve:other".utf8).base64EncodedString()])
        let missing = try fetch([server.url("/files/c.jpg")], ["--netrc-file", scratch.file("none").path])
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("cannot read --netrc-file"), missing.stderr)
    }
}
