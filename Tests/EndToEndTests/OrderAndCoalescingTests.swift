import Foundation
import XCTest

/// One request per unique URL, and the start order of --fifo, --lifo and priority= classes, as the server saw it.
final class OrderAndCoalescingTests: EndToEndTestCase {
    func testDuplicateURLsAreFetchedOnceAndSavedUnderEveryName() throws {
        let names = try server.addSamples(count: 10)
        let urls = names.map { server.url("/files/\($0)") }
        // Each URL three times, far apart: plain, then out=b-NAME, then out=c-NAME.
        let list = urls + zip(urls, names).map { "\($0) out=b-\($1)" } + zip(urls, names).map { "\($0) out=c-\($1)" }
        let result = try fetch(list)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.count, 60)
        XCTAssertEqual(try server.requests(to: "/files/").count, 20)
        for name in names {
            let original = try server.fileData(name)
            for saved in [name, "b-\(name)", "c-\(name)"] {
                XCTAssertEqual(try outputData(saved), original, saved)
            }
        }
        XCTAssertEqual(try outputFiles().count, 60)
    }

    func testSameURLSameNameIsWrittenOnce() throws {
        let data = try addJPEG("a.jpg")
        let url = server.url("/delay/0.3/files/a.jpg")
        let result = try fetch([url, url, url])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.map { $0[0] }, ["saved", "saved", "saved"])
        XCTAssertEqual(Set(result.results.map { $0[2] }), [outputDirectory + "/a.jpg"])
        XCTAssertEqual(try outputFiles(), ["a.jpg"])
        XCTAssertEqual(try outputData("a.jpg"), data)
        XCTAssertEqual(try server.requests(to: "/delay/").count, 1)
    }

    func testURLsThatNormalizeAlikeAreOneRequest() throws {
        _ = try addJPEG("a.jpg")
        let plain = server.url("/files/a.jpg")
        let variant = "HTTP://127.0.0.1:\(server.port)/files/a.jpg#fragment"
        let result = try fetch([plain, variant + " out=other.jpg"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try server.requests(to: "/files/").count, 1)
        XCTAssertEqual(try outputFiles(), ["a.jpg", "other.jpg"])
    }

    func testFIFOStartsInListOrder() throws {
        let names = try prepareNumberedFiles(8)
        let result = try fetch([server.url("/delay/0.5/files/\(names[0])")] + names.dropFirst().map { server.url("/files/\($0)") },
                               ["-j", "1", "--fifo"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try requestedNames(), names)
    }

    func testLIFOStartsTheNewestPendingRequestFirst() throws {
        let names = try prepareNumberedFiles(8)
        // The first request holds the only slot while the rest of the list arrives.
        let result = try fetch([server.url("/delay/0.5/files/\(names[0])")] + names.dropFirst().map { server.url("/files/\($0)") },
                               ["-j", "1", "--lifo"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        try assertLIFO(names)
    }

    func testLIFOWhileTheListStreamsFromStdin() throws {
        let names = try prepareNumberedFiles(5)
        let list = ([server.url("/delay/0.5/files/\(names[0])")] + names.dropFirst().map { server.url("/files/\($0)") })
            .joined(separator: "\n") + "\n"
        let result = try ImgFetchRunner.run(["-", "-o", outputDirectory, "-j", "1", "--lifo"], stdin: list)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        try assertLIFO(names)
    }

    /// Newest first among the lines read so far: the first transfer may start when only part of
    /// the list has arrived (the first line alone, or a few); every later pick sees them all and
    /// takes the newest.
    private func assertLIFO(_ names: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let seen = try requestedNames()
        let indices = seen.compactMap { names.firstIndex(of: $0) }
        XCTAssertEqual(indices.sorted(), Array(names.indices), "\(seen)", file: file, line: line)
        XCTAssertTrue(Self.isSchedulerOrder(indices, classes: names.map { _ in "normal" }, lifo: true),
                      "not LIFO: \(seen)", file: file, line: line)
    }

    func testHigherPriorityClassesStartFirst() throws {
        let names = try prepareNumberedFiles(7)
        let priorities = ["normal", "low", "high", "normal", "high", "low"]
        let list = [server.url("/delay/0.5/files/\(names[0])")]
            + zip(names.dropFirst(), priorities).map { server.url("/files/\($0)") + " priority=\($1)" }
        for order in ["--fifo", "--lifo"] {
            try? FileManager.default.removeItem(atPath: outputDirectory)
            let before = try server.requests(to: "/").count
            let result = try fetch(list, ["-j", "1", order])
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let seen = try requestedNames().dropFirst(before)
            // names[0...6] have priorities normal, normal, low, high, normal, high, low. The list
            // streams in while the first transfer starts, so the first pick may see only part of it
            // (names[0] alone, or a few lines); names[0] is slow, so every later pick sees them all.
            let classes = ["normal"] + priorities
            let indices = try Array(seen).map { try XCTUnwrap(names.firstIndex(of: $0)) }
            XCTAssertEqual(indices.sorted(), Array(0..<7), "\(order): \(Array(seen))")
            XCTAssertTrue(Self.isSchedulerOrder(indices, classes: classes, lifo: order == "--lifo"),
                          "\(order): \(Array(seen))")
        }
    }

    /// Whether `picks` (list indices in start order) is what the scheduler does: each pick is the
    /// best of the items waiting (higher class first, then oldest first, or newest first with
    /// LIFO). The first pick may come when only part of the list has been read, up to the picked
    /// line; every later one comes after a transfer, when the whole (short) list is in.
    private static func isSchedulerOrder(_ picks: [Int], classes: [String], lifo: Bool) -> Bool {
        let rank = ["high": 0, "normal": 1, "low": 2]
        var started = Set<Int>()
        for (position, pick) in picks.enumerated() {
            let arrived = position == 0 ? pick + 1 : classes.count
            let waiting = (0..<arrived).filter { !started.contains($0) }
            let best = waiting.min { a, b in
                let (ra, rb) = (rank[classes[a]]!, rank[classes[b]]!)
                return ra != rb ? ra < rb : (lifo ? a > b : a < b)
            }
            guard best == pick else { return false }
            started.insert(pick)
        }
        return true
    }

    // MARK: - Helpers

    /// Files `f01.jpg`, `f02.jpg`, … served by the test server.
    private func prepareNumberedFiles(_ count: Int) throws -> [String] {
        let data = try addJPEG("seed.jpg")
        return try (1...count).map { index in
            let name = String(format: "f%02d.jpg", index)
            try server.addFile(name, data)
            return name
        }
    }

    /// The file names the server was asked for, in arrival order.
    private func requestedNames() throws -> [String] {
        try server.requests().compactMap { $0.path.split(separator: "/").last.map(String.init) }
    }
}
