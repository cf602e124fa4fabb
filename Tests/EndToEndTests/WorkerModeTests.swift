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

    func testStdinIsReadToItsEndAfterAUsageErrorAndAfterTheDeadline() throws {
        // 200,000 lines (7 MB) are far more than a pipe holds: the writer finishes only if they are read.
        let url = server.url("/files/none.jpg")
        let producer = "yes '\(url)' | head -n 200000"
        for arguments in ["- --no-such-option --failures-are-data", "- -o '\(outputDirectory)' --deadline 0.5 --failures-are-data -j 1"] {
            let script = "\(producer) | '\(ImgFetchRunner.binary.path)' \(arguments) > /dev/null 2>&1; echo ${PIPESTATUS[@]}"
            let statuses = try ImgFetchRunner.runShell(script).stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            XCTAssertEqual(statuses.count, 3, arguments)
            XCTAssertEqual(statuses[1], "0", "head was not cut off (141 is SIGPIPE): \(arguments)")
            XCTAssertEqual(statuses[2], arguments.contains("no-such-option") ? "2" : "75", arguments)
        }
    }

    func testAnEmptyEnvironmentAndStdoutThatIsAlwaysUTF8() throws {
        _ = try addJPEG("a.jpg")
        // A line with bytes that are not UTF-8 (Latin-1 é, a lone continuation byte).
        var list = Data((server.url("/files/a.jpg") + "\n").utf8)
        list.append(contentsOf: Array("http://bad/caf".utf8) + [0xE9, 0x80] + Array(".jpg extra\n".utf8))
        let path = scratch.file("latin1.txt").path
        try list.write(to: URL(fileURLWithPath: path))
        for format in ["", "--jsonl"] {
            // `env -i`: no HOME, no PATH, no TERM, no locale, as Spark's RDD.pipe starts a command.
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
