import Foundation
import XCTest

/// What `Scripts/package` made, as `Scripts/test` hands it to the tests: the artifacts' directory
/// (`IMGFETCH_DIST`: the .deb, the tarball, SHA256SUMS), the binary unpacked from the tarball
/// (`IMGFETCH_PACKAGED_BINARY`) and the container image's tag (`IMGFETCH_IMAGE`).
struct PackagedArtifacts {
    let dist: URL
    let binary: URL
    /// The package's version, as the binary prints it (`0.1.0`, or `0.1.0+dirty`).
    let version: String

    /// The artifacts, or a skip that says how to get them: a test run alone has none.
    init() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let dist = environment["IMGFETCH_DIST"], let binary = environment["IMGFETCH_PACKAGED_BINARY"] else {
            throw XCTSkip("IMGFETCH_DIST and IMGFETCH_PACKAGED_BINARY are not set (Scripts/test runs Scripts/package and sets them)")
        }
        self.dist = URL(fileURLWithPath: dist)
        self.binary = URL(fileURLWithPath: binary)
        let printed = try ImgFetchRunner.run(["--version"], executable: self.binary)
        version = String(printed.stdout.split(separator: " ").dropFirst().first ?? "")
    }

    var deb: URL { dist.appendingPathComponent("imgfetch_\(version)_amd64.deb") }
    var tarball: URL { dist.appendingPathComponent("imgfetch-\(version)-linux-x86_64.tar.gz") }

    /// The image's tag, when `Scripts/test` built it.
    var image: String? { ProcessInfo.processInfo.environment["IMGFETCH_IMAGE"] }

    static let root = TestServer.packageRoot

    /// The Swift toolchain's directory that `Scripts/test-support/without-toolchain` hides.
    static var toolchain: String {
        get throws {
            let found = try ImgFetchRunner.run(["--print"], executable: root.appendingPathComponent("Scripts/test-support/without-toolchain"))
            return found.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Runs `executable ARGUMENTS` where the Swift toolchain cannot be seen (`Scripts/test-support/without-toolchain`).
    static func withoutToolchain(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> Execution {
        try ImgFetchRunner.run([executable.path] + arguments, in: directory,
                               executable: root.appendingPathComponent("Scripts/test-support/without-toolchain"))
    }

    /// Runs `command` with bash as root in a fresh minimal Debian 12 root (`Scripts/test-support/clean-root`),
    /// in `directory` (its `/work`); a skip when there is no such root to be had (offline).
    static func inCleanRoot(_ directory: URL, _ command: String) throws -> Execution {
        let run = try ImgFetchRunner.run([directory.path, command], executable: root.appendingPathComponent("Scripts/test-support/clean-root"))
        if run.exitCode == 77 {
            throw XCTSkip(run.stderr.split(separator: "\n").last.map(String.init) ?? "no Debian root")
        }
        return run
    }

    /// The README's section `heading` (from its line to the next `## ` heading).
    static func readmeSection(_ heading: String) throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try XCTUnwrap(readme.range(of: "\n" + heading + "\n"), "README.md has no '\(heading)'")
        let rest = readme[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// The commands a README section shows (its lines indented by four spaces), without their comments.
    static func commands(in section: String) -> [String] {
        section.split(separator: "\n").filter { $0.hasPrefix("    ") }.map {
            let line = $0.dropFirst(4)
            return String(line[..<(line.range(of: "  #")?.lowerBound ?? line.endIndex)]).trimmingCharacters(in: .whitespaces)
        }
    }
}
