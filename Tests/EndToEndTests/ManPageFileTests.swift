import Foundation
import XCTest

/// `man/imgfetch.1` is what `imgfetch --man` prints, and man, groff and mandoc render it without
/// a warning.
final class ManPageFileTests: XCTestCase {
    private let page = TestServer.packageRoot.appendingPathComponent("man/imgfetch.1")

    func testTheCommittedPageIsWhatManPrints() throws {
        let result = try ImgFetchRunner.run(["--man"])
        XCTAssertEqual(result.exitCode, 0)
        XCTAssertEqual(result.stderr, "")
        let committed = try String(contentsOf: page, encoding: .utf8)
        XCTAssertTrue(committed == result.stdout,
                      "man/imgfetch.1 is stale: regenerate it with `swift build && .build/debug/imgfetch --man > man/imgfetch.1`")
    }

    func testManRendersItWithoutWarningsIn80Columns() throws {
        let result = try tool("/usr/bin/man", ["--warnings", "-l", page.path],
                              environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "LANG": "C.UTF-8"])
        XCTAssertEqual(result.exitCode, 0)
        XCTAssertEqual(result.stderr, "")
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first?.hasPrefix("IMGFETCH(1)"), true, result.stdout)
        for needle in ["SYNOPSIS", "       imgfetch [OPTIONS] [URL | LIST ...]", "       -o, --output-dir DIR",
                       "       --completions SHELL", "LIST FORMAT", "EXIT STATUS", "       141", "       curl(1), wget2(1)"] {
            XCTAssertTrue(lines.contains { $0.hasPrefix(needle) }, "no line starts with \(needle)")
        }
        for line in lines { XCTAssertLessThanOrEqual(line.count, 80, String(line)) }
    }

    func testGroffFindsNothingToWarnAbout() throws {
        let result = try tool("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page.path])
        XCTAssertEqual(result.exitCode, 0)
        XCTAssertEqual(result.stderr, "", "groff warns (it exits 0 all the same)")
    }

    func testMandocLintIsClean() throws {
        let result = try tool("/usr/bin/mandoc", ["-T", "lint", page.path])
        XCTAssertEqual(result.exitCode, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stdout + result.stderr, "")
    }

    private func tool(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Execution {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(path) is not installed (Scripts/install-deps installs it)")
        }
        return try ImgFetchRunner.run(arguments, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 },
                                      executable: URL(fileURLWithPath: path))
    }
}
