import Foundation
import XCTest

/// `Scripts/install`: the binary, the man page and the completions land under the prefix, and a
/// second run changes nothing. It installs the debug binary the tests use (`--binary`): a release
/// build would take minutes.
final class InstallScriptTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private let script = TestServer.packageRoot.appendingPathComponent("Scripts/install")

    /// What goes where, with its mode, and the imgfetch arguments that print it (nil: the binary).
    private let installed: [(path: String, mode: Int, printedBy: [String]?)] = [
        ("bin/imgfetch", 0o755, nil),
        ("share/man/man1/imgfetch.1", 0o644, ["--man"]),
        ("share/bash-completion/completions/imgfetch", 0o644, ["--completions", "bash"]),
        ("share/zsh/site-functions/_imgfetch", 0o644, ["--completions", "zsh"]),
        ("share/fish/vendor_completions.d/imgfetch.fish", 0o644, ["--completions", "fish"]),
    ]

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        scratch?.remove()
    }

    private func install(_ arguments: [String], in directory: URL? = nil) throws -> Execution {
        try ImgFetchRunner.run(arguments, in: directory, executable: script)
    }

    private func attributes(_ path: String) throws -> (inode: Int, modified: Date, mode: Int) {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return ((attributes[.systemFileNumber] as? NSNumber)?.intValue ?? -1,
                attributes[.modificationDate] as? Date ?? .distantPast,
                (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1)
    }

    func testInstallsEverythingUnderThePrefixAndAgainChangesNothing() throws {
        let prefix = scratch.file("prefix").path
        let first = try install(["--prefix", prefix, "--binary", ImgFetchRunner.binary.path])
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        var before: [String: (inode: Int, modified: Date, mode: Int)] = [:]
        for file in installed {
            let path = prefix + "/" + file.path
            XCTAssertTrue(first.stderr.contains("installed:  \(path)\n"), first.stderr)
            let expected = try file.printedBy.map { try Data(ImgFetchRunner.run($0).stdout.utf8) }
                ?? Data(contentsOf: ImgFetchRunner.binary)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), expected, file.path)
            before[path] = try attributes(path)
            XCTAssertEqual(before[path]?.mode, file.mode, file.path)
        }
        let version = try ImgFetchRunner.run(["--version"], executable: URL(fileURLWithPath: prefix + "/bin/imgfetch"))
        XCTAssertEqual(version.exitCode, 0)
        XCTAssertTrue(version.stdout.hasPrefix("imgfetch "), version.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: prefix + "/bin"), ["imgfetch"], "no temp file left")

        let again = try install(["--prefix=\(prefix)", "--binary=\(ImgFetchRunner.binary.path)"])
        XCTAssertEqual(again.exitCode, 0, again.stderr)
        for file in installed {
            let path = prefix + "/" + file.path
            XCTAssertTrue(again.stderr.contains("up to date: \(path)\n"), again.stderr)
            let after = try attributes(path)
            XCTAssertEqual(after.inode, before[path]?.inode, "\(file.path) was replaced")
            XCTAssertEqual(after.modified, before[path]?.modified, "\(file.path) was touched")
        }
    }

    func testAChangedFileIsReplacedAndOnlyThat() throws {
        let prefix = scratch.file("prefix").path
        XCTAssertEqual(try install(["--prefix", prefix, "--binary", ImgFetchRunner.binary.path]).exitCode, 0)
        let completion = prefix + "/share/bash-completion/completions/imgfetch"
        try "# edited\n".write(toFile: completion, atomically: false, encoding: .utf8)
        let manPage = prefix + "/share/man/man1/imgfetch.1"
        XCTAssertEqual(chmod(manPage, 0o600), 0)

        let again = try install(["--prefix", prefix, "--binary", ImgFetchRunner.binary.path])
        XCTAssertEqual(again.exitCode, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("installed:  \(completion)\n"), again.stderr)
        XCTAssertTrue(again.stderr.contains("installed:  \(manPage)\n"), again.stderr)
        XCTAssertTrue(again.stderr.contains("up to date: \(prefix)/bin/imgfetch\n"), again.stderr)
        XCTAssertEqual(try String(contentsOfFile: completion, encoding: .utf8),
                       try ImgFetchRunner.run(["--completions", "bash"]).stdout)
        XCTAssertEqual(try attributes(manPage).mode, 0o644)
    }

    func testARelativePrefixIsRelativeToTheCallersDirectory() throws {
        let result = try install(["--prefix", "local", "--binary", ImgFetchRunner.binary.path], in: scratch.url)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: scratch.file("local/bin/imgfetch").path))
    }

    func testHelpAndMistakes() throws {
        let help = try install(["--help"])
        XCTAssertEqual(help.exitCode, 0)
        XCTAssertTrue(help.stdout.hasPrefix("Usage: Scripts/install [--prefix DIR] [--binary PATH]\n"), help.stdout)
        XCTAssertTrue(help.stdout.contains("share/zsh/site-functions/_imgfetch"), help.stdout)

        let unknown = try install(["--frobnicate"])
        XCTAssertEqual(unknown.exitCode, 2)
        XCTAssertTrue(unknown.stderr.contains("unknown argument '--frobnicate'"), unknown.stderr)
        let missing = try install(["--prefix"])
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("--prefix needs a directory"), missing.stderr)
        let notABinary = try install(["--prefix", scratch.path, "--binary", scratch.file("nothing").path])
        XCTAssertEqual(notABinary.exitCode, 2)
        XCTAssertTrue(notABinary.stderr.contains("is not an executable file"), notABinary.stderr)
        XCTAssertEqual(try scratch.contents(), [], "nothing installed after a mistake")
    }
}
