import Foundation
import XCTest
@testable import ImgFetchCLI
import ImgFetchCore

/// `--shard K/N`: a stable hash any tool can compute, every item in exactly one shard, and the
/// shard a cluster's environment gives.
final class ShardSelectorTests: XCTestCase {
    private func item(_ url: String) throws -> ListEntry {
        .item(ListItem(url: try ParsedURL(url)))
    }

    func testEveryItemIsInExactlyOneShardForAnyCount() throws {
        let entries = try (0..<1000).map { try item("https://host\($0 % 17).example/images/\($0).jpg") }
            + [ListEntry.invalid(text: "ftp://nope", reason: "bad"), .invalid(text: "", reason: "empty URL")]
        for count in 1...7 {
            var sizes = [Int](repeating: 0, count: count)
            for (line, entry) in entries.enumerated() {
                let owners = (0..<count).filter { ShardSelector(index: $0, count: count).takes(entry, line: line + 1) }
                XCTAssertEqual(owners.count, 1, "line \(line + 1) of \(count) shards: \(owners)")
                owners.forEach { sizes[$0] += 1 }
            }
            XCTAssertTrue(sizes.allSatisfy { $0 > 1002 / count / 2 }, "\(count) shards: \(sizes)")
        }
    }

    func testByHostAHostsItemsStayTogether() throws {
        var byHost: [String: Set<Int>] = [:]
        for i in 0..<300 {
            let url = "https://host\(i % 11).example/\(i).jpg"
            let owner = (0..<4).first { ShardSelector(index: $0, count: 4, key: .host).takes(try! item(url), line: i) }!
            byHost["host\(i % 11)", default: []].insert(owner)
        }
        XCTAssertTrue(byHost.values.allSatisfy { $0.count == 1 }, "\(byHost)")
    }

    func testTheHashIsTheOneThatPythonComputes() throws {
        let url = "https://example.com/a/b.jpg?x=1"
        let script = "import hashlib; print(int.from_bytes(hashlib.sha256(b'\(url)').digest()[:8], 'big') % 7)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), ShardSelector.shard(of: url, count: 7))
        XCTAssertEqual(try ParsedURL(url).normalized, url, "the hash is of the normalized URL, which this one already is")
    }

    func testParsing() throws {
        XCTAssertEqual(try ShardSelector.parse("0/1", for: "--shard"), ShardSelector(index: 0, count: 1))
        XCTAssertEqual(try ShardSelector.parse("6/7", for: "--shard"), ShardSelector(index: 6, count: 7))
        for bad in ["7/7", "1", "-1/3", "1/0", "a/b", "1/3/4", " 1/3", "1/", "/3", "+1/3"] {
            XCTAssertThrowsError(try ShardSelector.parse(bad, for: "--shard"), bad)
        }
        // The key is set where the environment may give the shard: in RunEnvironment.
        XCTAssertEqual(try OptionParser.parse(["--shard", "2/5", "--shard-by", "host"], environment: [:]).shard,
                       ShardSelector(index: 2, count: 5, key: .host))
        XCTAssertThrowsError(try OptionParser.parse(["--shard-by", "host"], environment: [:]))
    }

    func testTheEnvironmentOfEachEngine() throws {
        func shard(_ environment: [String: String], _ arguments: [String] = []) throws -> ShardSelector? {
            try OptionParser.parse(arguments, environment: environment).shard
        }
        XCTAssertNil(try shard([:]))
        XCTAssertNil(try shard(["HOME": "/root"]))
        XCTAssertEqual(try shard(["JOB_COMPLETION_INDEX": "3", "IMGFETCH_SHARD_COUNT": "8"]), ShardSelector(index: 3, count: 8))
        XCTAssertEqual(try shard(["SLURM_ARRAY_TASK_ID": "2", "IMGFETCH_SHARD_COUNT": "4"]), ShardSelector(index: 2, count: 4))
        // Slurm sets its array variables in every task: without IMGFETCH_SHARD_COUNT nothing is sharded,
        // and its MIN and COUNT (those of the array submitted) never decide the shard.
        XCTAssertNil(try shard(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"]))
        XCTAssertEqual(try shard(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_COUNT": "1",
                                  "IMGFETCH_SHARD_COUNT": "4"]), ShardSelector(index: 2, count: 4), "a rerun of task 2 alone")
        // An explicit flag wins, even over a half-set environment; --version and --help ignore it.
        XCTAssertEqual(try shard(["JOB_COMPLETION_INDEX": "3"], ["--shard", "1/2"]), ShardSelector(index: 1, count: 2))
        XCTAssertEqual(try OptionParser.parse(["--version"], environment: ["JOB_COMPLETION_INDEX": "3"]).action, .version)

        func failure(_ environment: [String: String]) -> String {
            do {
                _ = try OptionParser.parse([], environment: environment)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(failure(["JOB_COMPLETION_INDEX": "3"]), "option '--shard' found JOB_COMPLETION_INDEX in the environment "
            + "but not IMGFETCH_SHARD_COUNT; set it to the Job's completions, or give --shard K/N")
        XCTAssertEqual(failure(["IMGFETCH_SHARD_COUNT": "4"]), "option '--shard' found IMGFETCH_SHARD_COUNT in the environment "
            + "but neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID; give --shard K/N")
        XCTAssertEqual(failure(["JOB_COMPLETION_INDEX": "8", "IMGFETCH_SHARD_COUNT": "8"]),
                       "option '--shard' JOB_COMPLETION_INDEX=8, IMGFETCH_SHARD_COUNT=8 give shard 8 of 8; expected 0 to N-1 of N")
        XCTAssertEqual(failure(["SLURM_ARRAY_TASK_ID": "4", "IMGFETCH_SHARD_COUNT": "4"]), "option '--shard' SLURM_ARRAY_TASK_ID=4, "
            + "IMGFETCH_SHARD_COUNT=4 (a Slurm array must run 0 to N-1) give shard 4 of 4; expected 0 to N-1 of N")
        XCTAssertEqual(failure(["JOB_COMPLETION_INDEX": "x", "IMGFETCH_SHARD_COUNT": "8"]),
                       "option '--shard' cannot use JOB_COMPLETION_INDEX='x': expected a whole number")
    }
}
