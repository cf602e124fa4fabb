import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// `--http1.1`, `--http2` and `--resolve` (issue 13).
final class NetworkOptionTests: XCTestCase {
    func testHTTPVersionDefaultsToAutomaticAndTheLastFlagWins() throws {
        XCTAssertEqual(try OptionParser.parse([]).httpVersion, .automatic)
        XCTAssertEqual(try OptionParser.parse(["--http1.1"]).httpVersion, .http1_1)
        XCTAssertEqual(try OptionParser.parse(["--http2"]).httpVersion, .http2)
        XCTAssertEqual(try OptionParser.parse(["--http2", "--http1.1"]).httpVersion, .http1_1)
        XCTAssertEqual(try OptionParser.parse(["--http1.1", "--http2"]).httpVersion, .http2)
        XCTAssertEqual(message(["--http2=yes"]), "option '--http2' takes no value")
    }

    func testResolveEntriesAreKeptInOrder() throws {
        let entries = ["img-1.example:443:127.0.1.1", "img-2.example:80:127.0.1.2,127.0.1.3",
                       "v6.example:8443:[::1]", "both.example:443:::1,127.0.0.1"]
        let options = try OptionParser.parse(entries.flatMap { ["--resolve", $0] })
        XCTAssertEqual(options.resolve, entries)
        XCTAssertEqual(options.downloaderConfiguration(outputDirectory: "out").resolve, entries)
    }

    func testResolveErrorsSayWhatIsExpected() {
        let shape = "expected HOST:PORT:ADDRESS[,ADDRESS...] with numeric addresses"
        XCTAssertEqual(message(["--resolve", "example.com:443"]), "invalid value 'example.com:443' for '--resolve': \(shape)")
        XCTAssertEqual(message(["--resolve", ":443:127.0.0.1"]), "invalid value ':443:127.0.0.1' for '--resolve': \(shape)")
        XCTAssertEqual(message(["--resolve", "+a.example:443:127.0.0.1"]),
                       "invalid value '+a.example:443:127.0.0.1' for '--resolve': \(shape)")
        XCTAssertEqual(message(["--resolve", "a.example:0:127.0.0.1"]),
                       "invalid value 'a.example:0:127.0.0.1' for '--resolve': the port must be a number from 1 to 65535")
        XCTAssertEqual(message(["--resolve", "a.example:https:127.0.0.1"]),
                       "invalid value 'a.example:https:127.0.0.1' for '--resolve': the port must be a number from 1 to 65535")
        XCTAssertEqual(message(["--resolve", "a.example:443:localhost"]),
                       "invalid value 'a.example:443:localhost' for '--resolve': 'localhost' is not an IPv4 or IPv6 address")
        XCTAssertEqual(message(["--resolve", "a.example:443:127.0.0.1,"]),
                       "invalid value 'a.example:443:127.0.0.1,' for '--resolve': '' is not an IPv4 or IPv6 address")
        let long = String(repeating: "a", count: 256)
        XCTAssertEqual(message(["--resolve", "\(long):443:127.0.0.1"]), "invalid value '\(long):443:127.0.0.1' for '--resolve': \(shape)")
        XCTAssertEqual(message(["--resolve", "a.example:443:127.0.0.256"]),
                       "invalid value 'a.example:443:127.0.0.256' for '--resolve': '127.0.0.256' is not an IPv4 or IPv6 address")
    }

    func testHelpDescribesThePerHostRule() {
        // The help is filled to 80 columns: the phrase may span lines.
        let help = HelpText.all.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(help.contains("HTTP/2 host runs up to 100 transfers on each"))
    }

    private func message(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try OptionParser.parse(arguments)
            XCTFail("\(arguments) parsed", file: file, line: line)
            return ""
        } catch {
            return error.description
        }
    }
}
