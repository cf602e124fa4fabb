import Foundation
import XCTest

/// Issue 6, filesystem: hostile names, planted symlinks, full disks, stale temp files, bad output directories.
final class FilesystemFaultTests: EndToEndTestCase {
    // MARK: - Names from hostile URLs

    func testHostileURLNamesLandInsideTheOutputDirectoryUnderSafeNames() throws {
        let data = try addJPEG("x.jpg")
        let long = String(repeating: "a", count: 5000)
        // Every path ends (after the server's own prefixes) at /files/x.jpg, through a redirect, so
        // the list URL's last segment is whatever hostile text the test wants.
        let target = server.url("/files/x.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let segments = ["..%2Fx", "%2e%2e%2f%2e%2e%2fetc%2fx", "%2Fetc%2Fx", "%2f", ".", "..", ".bashrc",
                        "a%0D%0Ab", "nul%00byte", "", long, "..%5C..%5Cwin"]
        let list = segments.enumerated().map { index, segment in
            server.url("/redirect-to/\(index)/\(segment)?url=\(target)")
        }
        let result = try fetch(list, ["-j", "4"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.count, segments.count)
        let files = try outputFiles()
        XCTAssertEqual(files.count, segments.count, "\(files)")
        for file in files {
            XCTAssertFalse(file.hasPrefix("."), "dot-file: \(file)")
            XCTAssertFalse(file.contains("/") || file.contains("\r") || file.contains("\n") || file.contains("\0"), file)
            XCTAssertLessThanOrEqual(file.utf8.count, 255, file)
            XCTAssertEqual(try outputData(file), data, file)
        }
        for line in result.results where line.count == 3 {
            XCTAssertTrue(line[2].hasPrefix(outputDirectory + "/"), line[2])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("x").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("x.jpg").path))
    }

    // MARK: - Symlinks and existing files

    func testASymlinkAtTheFinalPathIsNeverFollowed() throws {
        _ = try addJPEG("x.jpg")
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let victim = scratch.file("victim.txt")
        try Data("precious".utf8).write(to: victim)
        let link = URL(fileURLWithPath: outputDirectory).appendingPathComponent("x.jpg")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)

        let skipped = try fetch([server.url("/files/x.jpg")])
        XCTAssertEqual(skipped.results.first?[0], "skipped", "a symlink at the final path counts as an existing file")
        XCTAssertEqual(try Data(contentsOf: victim), Data("precious".utf8))

        let replaced = try fetch([server.url("/files/x.jpg")], ["--overwrite"])
        XCTAssertEqual(replaced.exitCode, 0, replaced.stderr)
        XCTAssertEqual(try Data(contentsOf: victim), Data("precious".utf8), "the link's target is untouched")
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
        XCTAssertEqual(attributes[.type] as? FileAttributeType, .typeRegular, "the link itself was replaced")
    }

    func testADanglingSymlinkIsNotWrittenThrough() throws {
        _ = try addJPEG("x.jpg")
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let target = scratch.file("created-through-link")
        try FileManager.default.createSymbolicLink(atPath: outputDirectory + "/x.jpg", withDestinationPath: target.path)
        _ = try fetch([server.url("/files/x.jpg")])
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    // MARK: - Write errors

    func testAFullDiskFailsCleanlyLeavesNoFileAndStopsTheRun() throws {
        let disk = try SmallDisk(in: scratch, name: "tiny", size: "256k")
        defer { disk.unmount() }
        let mountPoint = disk.url
        let data = try addJPEG("small.jpg")
        let big = server.url("/big/2000000")
        let small = server.url("/files/small.jpg")
        let list = try scratch.write("urls.txt", big + "\n" + small + "\n")
        let result = try ImgFetchRunner.run([list, "-o", mountPoint.path, "-j", "1", "--max-size", "10M", "--min-free", "0"])

        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: big)?[2].contains("No space left on device") ?? false, result.stdout)
        // After a full disk nothing more is downloaded: the next item fails without a request.
        XCTAssertEqual(result.result(for: small)?[0], "failed")
        XCTAssertTrue(result.result(for: small)?[2].hasPrefix("not downloaded: the output's disk is full (") ?? false, result.stdout)
        XCTAssertEqual(try server.requests(to: "/files/small.jpg").count, 0)
        XCTAssertTrue(result.stderr.contains("imgfetch: stopped downloading: the output's disk is full"), result.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: mountPoint.path)
        XCTAssertEqual(files.filter { $0 != ".imgfetch" }, [], "the failed body's temp file was removed")

        // The disk has room again (the big body's temp file went): the item that fits is saved.
        let smallList = try scratch.write("small.txt", small + "\n")
        let again = try ImgFetchRunner.run([smallList, "-o", mountPoint.path, "--min-free", "0"])
        XCTAssertEqual(again.result(for: small)?[0], "saved", again.stdout)
        XCTAssertEqual(try Data(contentsOf: mountPoint.appendingPathComponent("small.jpg")), data)
    }

    func testADiskThatFillsDuringAShardRemovesItsTempFileAndFailsItsRows() throws {
        let disk = try SmallDisk(in: scratch, name: "tiny-shards", size: "256k")
        defer { disk.unmount() }
        let mountPoint = disk.url
        // 60 KB bodies that sniff as JPEG (--no-decode): small enough to stay in memory, so the tar
        // is what fills the disk, at the fifth sample.
        var body = Data([0xFF, 0xD8, 0xFF, 0xE0])
        var generator = SystemRandomNumberGenerator()
        body.append(contentsOf: (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try server.addFile("noise.jpg", body)
        let urls = (0..<30).map { server.url("/files/noise.jpg?\($0)") }
        let list = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        let result = try ImgFetchRunner.run([list, "-o", mountPoint.path, "--no-decode", "-j", "4", "--output-format", "webdataset",
                                             "--min-free", "0"])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        // The rows written before the disk filled are lost with their shard: no line says "saved".
        // Every row fails for the disk, none for anything else: once broken, the shard writes
        // nothing more (its closed descriptors' numbers are soon other files' and sockets').
        XCTAssertEqual(result.results.map { $0[0] }, Array(repeating: "failed", count: 30), result.stdout)
        for line in result.results where line[0] == "failed" {
            XCTAssertTrue(line[2].contains("No space left on device"), line.joined(separator: " "))
        }
        XCTAssertTrue(result.stderr.contains("000000.tar not written: cannot write"), result.stderr)
        // Only the run lock's folder (`.imgfetch/run.lock`).
        let files = try FileManager.default.contentsOfDirectory(atPath: mountPoint.path).filter { $0 != ".imgfetch" }
        XCTAssertEqual(files, [], "no shard under its final name, and no temp file left: \(files)")

        // A cluster worker's full disk is a temporary failure: its engine should run it again elsewhere.
        let worker = try ImgFetchRunner.run([list, "-o", mountPoint.path, "--no-decode", "-j", "4", "--output-format", "webdataset",
                                             "--failures-are-data", "--min-free", "0"])
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
    }

    // MARK: - Output directory

    func testAMissingOutputDirectoryIsCreated() throws {
        _ = try addJPEG("x.jpg")
        let nested = scratch.file("a/b/c").path
        let list = try scratch.write("urls.txt", server.url("/files/x.jpg") + "\n")
        let result = try ImgFetchRunner.run([list, "-o", nested])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: nested + "/x.jpg"))
    }

    func testAnOutputDirectoryThatIsAFileExits2BeforeAnyDownload() throws {
        let file = try scratch.write("not-a-dir", "x")
        let list = try scratch.write("urls.txt", server.url("/files/x.jpg") + "\n")
        let result = try ImgFetchRunner.run([list, "-o", file])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertTrue(result.stderr.contains("not a directory") || result.stderr.contains("output directory"), result.stderr)
        XCTAssertEqual(try server.requests().count, 0)
    }

    func testAReadOnlyOutputDirectoryExits2BeforeAnyDownload() throws {
        let directory = scratch.file("ro")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Root ignores permission bits, so make it read-only the way root cannot ignore: a read-only bind mount.
        guard runQuietly("/bin/mount", ["--bind", "-o", "ro", directory.path, directory.path]) == 0
                || runQuietly("/bin/mount", ["-o", "remount,ro,bind", directory.path]) == 0 else {
            throw XCTSkip("cannot make a read-only mount here")
        }
        defer { _ = runQuietly("/bin/umount", [directory.path]) }
        _ = runQuietly("/bin/mount", ["-o", "remount,ro,bind", directory.path])
        let list = try scratch.write("urls.txt", server.url("/files/x.jpg") + "\n")
        let result = try ImgFetchRunner.run([list, "-o", directory.path])
        XCTAssertEqual(result.exitCode, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot write to output directory"), result.stderr)
        XCTAssertEqual(try server.requests().count, 0)
    }

    // MARK: - kill -9

    func testAfterKill9TheNextRunLeavesNoPartialFilesAndCompletesTheSet() throws {
        let names = try server.addSamples(count: 4)
        let slow = names.map { server.url("/drip/500/files/\($0)") }
        let list = try scratch.write("urls.txt", slow.joined(separator: "\n") + "\n")
        let running = try RunningImgFetch([list, "-o", outputDirectory, "-j", "4"])
        XCTAssertTrue(eventually { !running.openFiles(under: outputDirectory).isEmpty }, "no temp file was opened")
        // Unnamed temp files (O_TMPFILE) show as "DIR/#INODE (deleted)"; named ones by their name.
        let unnamed = running.openFiles(under: outputDirectory).allSatisfy { $0.hasSuffix("(deleted)") }
        running.signal(SIGKILL)
        _ = try running.wait()
        // A small image may have finished before the kill; whatever is at a final path is complete.
        for file in try outputFiles() where !file.hasPrefix(".imgfetch-") {
            XCTAssertEqual(try outputData(file), try server.fileData(file), "partial file at a final path: \(file)")
        }
        if unnamed {
            XCTAssertFalse(try outputFiles().contains { $0.hasPrefix(".imgfetch-") }, "unnamed temp files leave no name behind")
        }

        let fast = names.map { server.url("/files/\($0)") + " out=\($0)" }
        let second = try fetch(fast)
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(try outputFiles(), names, "the stale temp files are gone and the set is complete")
        for name in names { XCTAssertEqual(try outputData(name), try server.fileData(name)) }
    }
}
