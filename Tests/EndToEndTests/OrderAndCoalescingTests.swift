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

    /// Newest first: the first line may already have started alone before the others arrived
    /// (then the rest follow newest first), or all of them were pending at once (fully reversed).
    private func assertLIFO(_ names: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let seen = try requestedNames()
        let startedEarly = [names[0]] + names.dropFirst().reversed()
        XCTAssertTrue(seen == startedEarly || seen == names.reversed(), "not LIFO: \(seen)", file: file, line: line)
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
            // names[0...6] have priorities normal, normal, low, high, normal, high, low. names[0] may
            // have started alone before the rest of the list arrived, or waited with all the others.
            let expected = order == "--fifo"
                ? [[0, 3, 5, 1, 4, 2, 6], [3, 5, 0, 1, 4, 2, 6]]
                : [[0, 5, 3, 4, 1, 6, 2], [5, 3, 4, 1, 0, 6, 2]]
            XCTAssertTrue(expected.map { $0.map { names[$0] } }.contains(Array(seen)), "\(order): \(Array(seen))")
        }
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
