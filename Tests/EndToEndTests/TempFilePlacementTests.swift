import Foundation
import XCTest

/// Temp files as a run makes them: unnamed (O_TMPFILE) where the output directory's file system
/// and /proc allow, so no temp name ever shows in the directory; named `.imgfetch-PID-N.part`
/// files otherwise, with the same results. Without /proc is the fallback a test can bring about
/// for real (in a mount namespace of its own, which needs root).
final class TempFilePlacementTests: EndToEndTestCase {
    func testARunNamesNoTempFileInTheOutputDirectory() throws {
        let names = Array(try server.addSamples(count: 1).prefix(2))
        let slow = server.url("/drip/4000/files/\(names[0])")
        let running = try RunningImgFetch([try list([slow, server.url("/files/\(names[1])")]), "-o", outputDirectory])
        XCTAssertTrue(eventually { running.openFiles(under: outputDirectory).contains { $0.hasSuffix("(deleted)") } },
                      "no unnamed temp file open: \(running.openFiles(under: outputDirectory))")
        XCTAssertFalse(try outputFiles().contains { $0.hasPrefix(".imgfetch-") }, "a temp file has a name")
        let result = try running.wait()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputFiles(), names.sorted())
        for name in names { XCTAssertEqual(try outputData(name), try server.fileData(name)) }
    }

    func testWithoutProcTempFilesAreNamedAndTheRunIsTheSame() throws {
        try requireMountNamespace()
        let names = try server.addSamples(count: 3)
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: outputDirectory).appendingPathComponent("existing.jpg"))
        // Without /proc, Swift's CommandLine.arguments is empty (the runtime reads /proc/self/cmdline):
        // the list comes on stdin, and the output goes to the working directory.
        let lines = [server.url("/drip/4000/files/\(names[0])") + " out=slow.jpg",
                     server.url("/files/\(names[1])") + " out=one.jpg",
                     server.url("/files/\(names[1])") + " out=two.jpg",
                     server.url("/files/\(names[2])") + " out=existing.jpg"]
        let withoutProc = ["-m", "--propagation", "private", "sh", "-c", "umount -l /proc && cd \"$1\" && exec \"$0\"",
                           ImgFetchRunner.binary.path, outputDirectory]
        let running = try RunningImgFetch(withoutProc, stdin: lines.joined(separator: "\n") + "\n",
                                          executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        XCTAssertTrue(try eventually { try outputFiles().contains { $0.hasPrefix(".imgfetch-") && $0.hasSuffix(".part") } },
                      "no named temp file appeared")
        let result = try running.wait()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.map { $0[0] }.sorted(), ["saved", "saved", "saved", "skipped"], result.stdout)
        XCTAssertEqual(try outputFiles(), ["existing.jpg", "one.jpg", "slow.jpg", "two.jpg"], "a temp file was left")
        XCTAssertEqual(try outputData("slow.jpg"), try server.fileData(names[0]))
        XCTAssertEqual(try outputData("one.jpg"), try server.fileData(names[1]))
        XCTAssertEqual(try outputData("two.jpg"), try server.fileData(names[1]))
        XCTAssertEqual(try outputData("existing.jpg"), Data("kept".utf8))
    }

    // MARK: - Helpers

    private func list(_ urls: [String]) throws -> String {
        try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
    }

    /// Skips unless this process may make a mount namespace and unmount /proc in it (root).
    private func requireMountNamespace() throws {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "--propagation", "private", "sh", "-c", "umount -l /proc && test ! -e /proc/self"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { throw XCTSkip("no unshare here") }
        probe.waitUntilExit()
        if probe.terminationStatus != 0 { throw XCTSkip("cannot unmount /proc in a mount namespace here (needs root)") }
    }
}
