import Glibc
import XCTest
@testable import ImgFetchCore

/// A small body stays in memory until it is written out in one call; a large one streams to disk.
final class TempFileMemoryTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var directory: String { scratch.path }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "imgfetch-tempmem")
    }

    override func tearDown() {
        scratch.remove()
    }

    private func write(_ bytes: [UInt8], to temp: TempFile, chunk: Int = 16 << 10) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            XCTAssertNil(bytes[offset..<end].withUnsafeBytes { temp.write($0) })
            offset = end
        }
    }

    private func fileBytes(_ path: String) throws -> [UInt8] {
        [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path)))
    }

    /// What `withContents` hands a decoder: "memory" with the bytes, or "file".
    private func contents(of temp: TempFile) -> (String, [UInt8]) {
        temp.withContents { source in
            switch source {
            case .memory(let bytes): ("memory", [UInt8](bytes))
            case .file: ("file", [])
            }
        }
    }

    func testASmallBodyIsHeldInMemoryUntilWrittenOutInOneCall() throws {
        let body = Fixtures.noise(count: 40_000)
        let temp = try TempFile.create(in: directory)
        write(body, to: temp)
        temp.finishWriting()
        XCTAssertEqual(try fileBytes(temp.path), [], "nothing reaches the file before writeOut")
        XCTAssertEqual(contents(of: temp).0, "memory")
        XCTAssertEqual(contents(of: temp).1, body)
        try temp.writeOut()
        XCTAssertEqual(try fileBytes(temp.path), body)
        XCTAssertEqual(contents(of: temp).1, body, "still readable from memory after writeOut")
        try temp.writeOut()
        XCTAssertEqual(try fileBytes(temp.path), body, "a second writeOut writes nothing more")
    }

    func testABodyOverTheMemoryLimitStreamsToTheFile() throws {
        let body = Fixtures.noise(count: TempFile.memoryLimit + 50_000)
        let temp = try TempFile.create(in: directory)
        write(body, to: temp)
        temp.finishWriting()
        XCTAssertEqual(try fileBytes(temp.path), body, "the whole body is on disk without writeOut")
        XCTAssertEqual(contents(of: temp).0, "file")
        try temp.writeOut()
        XCTAssertEqual(try fileBytes(temp.path), body)
    }

    func testABodyOfExactlyTheLimitStaysInMemory() throws {
        let body = Fixtures.noise(count: TempFile.memoryLimit)
        let temp = try TempFile.create(in: directory)
        write(body, to: temp, chunk: 5000)
        XCTAssertEqual(contents(of: temp).1, body)
        XCTAssertEqual(try fileBytes(temp.path), [])
    }

    func testTruncateStartsAHeldBodyOver() throws {
        let temp = try TempFile.create(in: directory)
        write(Array("first attempt".utf8), to: temp)
        temp.truncate()
        write(Array("body".utf8), to: temp)
        try temp.writeOut()
        XCTAssertEqual(try fileBytes(temp.path), Array("body".utf8))
    }

    func testTruncateEmptiesAStreamedBody() throws {
        let temp = try TempFile.create(in: directory)
        write(Fixtures.noise(count: TempFile.memoryLimit + 1), to: temp)
        temp.truncate()
        write(Array("body".utf8), to: temp)
        try temp.writeOut()
        XCTAssertEqual(try fileBytes(temp.path), Array("body".utf8))
    }

    func testCommittingAHeldBodyWritesItFirst() throws {
        let body = Fixtures.noise(count: 1000)
        let temp = try TempFile.create(in: directory)
        write(body, to: temp)
        temp.finishWriting()
        XCTAssertEqual(try temp.commit(to: directory + "/a.jpg", overwrite: false), .saved)
        XCTAssertEqual(try fileBytes(directory + "/a.jpg"), body)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["a.jpg"])
    }

    func testACopyOfAHeldBodyIsComplete() throws {
        let body = Fixtures.noise(count: 1000)
        let temp = try TempFile.create(in: directory)
        write(body, to: temp)
        XCTAssertEqual(try temp.place(at: directory + "/a.jpg", overwrite: false), .saved)
        let copy = try TempFile.copy(of: temp.path, in: directory)
        XCTAssertEqual(try copy.commit(to: directory + "/b.jpg", overwrite: false), .saved)
        XCTAssertEqual(try fileBytes(directory + "/b.jpg"), body)
    }
}

/// The run's budget for held bodies (issue 13): a thousand transfers must not hold 128 KiB each.
final class HeldBodyBudgetTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "imgfetch-heldbudget")
    }

    override func tearDown() {
        scratch.remove()
    }

    func testABodyThatDoesNotFitTheBudgetStreamsToItsFileAndIsComplete() throws {
        let budget = HeldBodyBudget(limit: 100 << 10)
        let first = try TempFile.create(in: scratch.path, budget: budget)
        let second = try TempFile.create(in: scratch.path, budget: budget)
        let body = Fixtures.noise(count: 60_000)
        XCTAssertNil(body.withUnsafeBytes { first.write($0) })
        XCTAssertEqual(budget.heldBytes, 60_000, "the first body's buffer is taken from the budget")
        XCTAssertNil(body.withUnsafeBytes { second.write($0) })
        XCTAssertEqual(budget.heldBytes, 60_000, "the second did not fit: it went to its file")
        second.finishWriting()
        XCTAssertEqual([UInt8](try XCTUnwrap(FileManager.default.contents(atPath: second.path))), body)
        try first.writeOut()
        XCTAssertEqual([UInt8](try XCTUnwrap(FileManager.default.contents(atPath: first.path))), body)
    }

    func testHeldBytesReturnToTheBudgetWhenTheFileGoesAway() throws {
        let budget = HeldBodyBudget(limit: 1 << 20)
        var temp: TempFile? = try TempFile.create(in: scratch.path, budget: budget)
        XCTAssertNil(Fixtures.noise(count: 70_000).withUnsafeBytes { temp!.write($0) })
        XCTAssertGreaterThan(budget.heldBytes, 0)
        temp = nil
        XCTAssertEqual(budget.heldBytes, 0)
    }

    func testGrowingPastTheMemoryLimitReturnsTheBufferToTheBudget() throws {
        let budget = HeldBodyBudget(limit: 1 << 20)
        let temp = try TempFile.create(in: scratch.path, budget: budget)
        let body = Fixtures.noise(count: TempFile.memoryLimit + 1)
        XCTAssertNil(body.withUnsafeBytes { temp.write(UnsafeRawBufferPointer(rebasing: $0.prefix(1000))) })
        XCTAssertNil(body.withUnsafeBytes { temp.write(UnsafeRawBufferPointer(rebasing: $0.dropFirst(1000))) })
        XCTAssertEqual(budget.heldBytes, 0)
    }

    func testReceiveBuffersShrinkAsConcurrencyGrows() {
        XCTAssertEqual(EasyHandleOptions.receiveBufferSize(concurrency: 16), 100 << 10)
        XCTAssertEqual(EasyHandleOptions.receiveBufferSize(concurrency: 64), 64 << 10)
        XCTAssertEqual(EasyHandleOptions.receiveBufferSize(concurrency: 1024), 16 << 10)
    }

    func testStatusLineProtocols() {
        XCTAssertEqual(HTTPVersion(statusLineProtocol: Array("HTTP/1.1".utf8)), .http1_1)
        XCTAssertEqual(HTTPVersion(statusLineProtocol: Array("HTTP/2".utf8)), .http2)
        XCTAssertEqual(HTTPVersion(statusLineProtocol: Array("HTTP/1.0".utf8)), .http1_0)
        XCTAssertNil(HTTPVersion(statusLineProtocol: Array("HTTP/9".utf8)))
        XCTAssertNil(HTTPVersion(statusLineProtocol: Array("ICY".utf8)))
    }
}
