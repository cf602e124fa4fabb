import Foundation
import XCTest

/// `--failures-are-data`: what a cluster engine needs of a worker: failures as data (exit 0),
/// 75 when a retry may help, 2 for a usage error, stdin read to its end, an empty environment,
/// UTF-8 on stdout.
final class WorkerModeTests: EndToEndTestCase {
    func testItemFailuresAreDataAndExitZero() throws {
        _ = try addJPEG("a.jpg")
        let urls = [server.url("/files/a.jpg"), server.url("/files/missing.jpg"), "ftp://bad/x.jpg"]
        let worker = try fetch(urls, ["--failures-are-data"])
        XCTAssertEqual(worker.exitCode, 0, worker.stderr)
        XCTAssertEqual(Set(worker.results.map { $0[0] }), ["saved", "failed"])
        XCTAssertEqual(worker.results.count, 3, "one line per input line")
        XCTAssertEqual(try fetch(urls).exitCode, 1, "without the option a failed item is exit 1")
    }

    func testAnOutputDirectoryThatCannotBeMadeIsATemporaryFailure() throws {
        let list = try scratch.write("urls.txt", server.url("/files/a.jpg") + "\n")
        let worker = try ImgFetchRunner.run([list, "-o", "/proc/imgfetch-cannot-be-here", "--failures-are-data"])
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
        XCTAssertTrue(worker.stderr.contains("cannot create output directory"), worker.stderr)
        let plain = try ImgFetchRunner.run([list, "-o", "/proc/imgfetch-cannot-be-here"])
        XCTAssertEqual(plain.exitCode, 2)
    }

    func testASignalIsATemporaryFailure() throws {
        let list = try scratch.write("slow.txt", server.url("/delay/30/files/a.jpg") + "\n")
        let script = "'\(ImgFetchRunner.binary.path)' '\(list)' -o '\(outputDirectory)' --failures-are-data > /dev/null & pid=$!; "
            + "sleep 1; kill -TERM $pid; wait $pid; echo $?"
        XCTAssertEqual(try ImgFetchRunner.runShell(script).stdout.trimmingCharacters(in: .whitespacesAndNewlines), "75")
    }

    func testStdinIsReadToItsEndAfterAUsageErrorButNeverWaitedForForever() throws {
        // 200,000 lines (7 MB) are far more than a pipe holds: the writer finishes only if they are read.
        let producer = "yes '\(server.url("/files/none.jpg"))' | head -n 200000"
        let script = "\(producer) | '\(ImgFetchRunner.binary.path)' - --no-such-option --failures-are-data > /dev/null 2>&1; "
            + "echo ${PIPESTATUS[@]}"
        let statuses = try ImgFetchRunner.runShell(script).stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        // yes gets SIGPIPE from head, as always; head itself must not.
        XCTAssertEqual(Array(statuses.dropFirst()), ["0", "2"], "head was not cut off by SIGPIPE (141), and the usage error stays 2")
        // A writer that never closes: the drain gives up (after 5 s without a byte), well within timeout's 60.
        XCTAssertEqual(try neverEndingStdin("- --no-such-option --failures-are-data"), "2",
                       "124 would be timeout's: the worker waited for a stdin that never ends")
    }

    /// Runs imgfetch with `arguments` on a stdin that gets one line and is then held open, and
    /// returns its exit code (timeout's 124 if it did not end within 60 s).
    private func neverEndingStdin(_ arguments: String) throws -> String {
        let fifo = scratch.file("stdin.fifo").path
        let script = "mkfifo '\(fifo)'; (echo '\(server.url("/delay/30/files/a.jpg"))'; exec sleep 120) > '\(fifo)' & writer=$!; "
            + "timeout 60 '\(ImgFetchRunner.binary.path)' \(arguments) < '\(fifo)' > /dev/null 2>&1; code=$?; "
            + "kill $writer 2>/dev/null; echo $code"
        return try ImgFetchRunner.runShell(script).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTheDeadlineIsATemporaryFailureThatStillEndsTheRun() throws {
        XCTAssertEqual(try neverEndingStdin("- -o '\(outputDirectory)' --deadline 1 --failures-are-data"), "75")
    }

    func testAListThatCannotBeReadOnIsATemporaryFailureReportedByEveryShard() throws {
        // stdin is a directory: reading it fails (EISDIR), as a list on a failing NFS mount would.
        for shard in ["", "--shard 0/3", "--shard 2/3"] {
            let script = "'\(ImgFetchRunner.binary.path)' - -o '\(outputDirectory)' --failures-are-data \(shard) < / 2>&1; echo \"exit $?\""
            let run = try ImgFetchRunner.runShell(script)
            XCTAssertTrue(run.stdout.contains("cannot read the list"), "\(shard): \(run.stdout)")
            XCTAssertTrue(run.stdout.hasSuffix("exit 75\n"), "\(shard): \(run.stdout)")
        }
    }

    func testAReportThatCannotBeWrittenIsATemporaryFailure() throws {
        _ = try addJPEG("a.jpg")
        let directory = scratch.file("report.jsonl").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let worker = try fetch([server.url("/files/a.jpg")], ["--failures-are-data", "--report", directory])
        XCTAssertEqual(worker.exitCode, 75, worker.stderr)
        XCTAssertTrue(worker.stderr.contains("cannot write report"), worker.stderr)
    }

    func testAnEmptyEnvironmentAndStdoutThatIsAlwaysUTF8() throws {
        _ = try addJPEG("a.jpg")
        // A line with bytes that are not UTF-8 (Latin-1 é, a lone continuation byte).
        var list = Data((server.url("/files/a.jpg") + "\n").utf8)
        list.append(contentsOf: Array("http://bad/caf".utf8) + [0xE9, 0x80] + Array(".jpg extra\n".utf8))
        let path = scratch.file("latin1.txt").path
        try list.write(to: URL(fileURLWithPath: path))
        for format in ["", "--jsonl"] {
            // `env -i`: no HOME, no PATH, no TERM, no locale, as spark-fetch starts a worker.
            // Python decodes stdout strictly: any byte that is not UTF-8 fails it.
            let script = "env -i '\(ImgFetchRunner.binary.path)' '\(path)' -o '\(outputDirectory)' --failures-are-data --overwrite \(format) "
                + "| python3 -c 'import sys; data = sys.stdin.buffer.read(); data.decode(\"utf-8\"); print(len(data.splitlines()))'; "
                + "echo ${PIPESTATUS[@]}"
            let run = try ImgFetchRunner.runShell(script)
            let lines = run.stdout.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.first, "2", "two lines, both UTF-8 (\(format)): \(run.stdout) \(run.stderr)")
            XCTAssertEqual(lines.last, "0 0", "imgfetch and the strict decode both succeed (\(format))")
        }
    }
}
