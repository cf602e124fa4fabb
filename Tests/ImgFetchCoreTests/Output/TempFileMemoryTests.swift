import Glibc
import XCTest
@testable import ImgFetchCore

/// A small body stays in memory until it is written out in one call; a large one streams to disk.
/// Both kinds of temp file (see `TempFileTestCase`).
final class TempFileMemoryTests: TempFileTestCase {
    override var scratchPrefix: String { "imgfetch-tempmem" }

    /// What `withContents` hands a decoder: "memory" with the bytes, "file" (a named file, by its
    /// name) or "descriptor" (an unnamed one), with what a read from there gives.
    private func contents(of temp: TempFile) -> (String, [UInt8]) {
        temp.withContents { source in
            switch source {
            case .memory(let bytes): ("memory", [UInt8](bytes))
            case .file(let path): ("file", bytes(atPath: path) ?? [])
            case .descriptor(let fd): ("descriptor", bytes(atPath: "/proc/self/fd/\(fd)") ?? [])
            }
        }
    }

    func testASmallBodyIsHeldInMemoryUntilWrittenOutInOneCall() throws {
        try forEachKind {
            let body = Fixtures.noise(count: 40_000)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp))
            temp.finishWriting()
            XCTAssertEqual(bytesOnDisk(temp), [], "nothing reaches the file before writeOut")
            XCTAssertEqual(contents(of: temp).0, "memory")
            XCTAssertEqual(contents(of: temp).1, body)
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), body)
            XCTAssertEqual(contents(of: temp).0, "memory", "still read from memory after writeOut")
            XCTAssertEqual(contents(of: temp).1, body)
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), body, "a second writeOut writes nothing more")
        }
    }

    func testABodyOverTheMemoryLimitStreamsToTheFile() throws {
        try forEachKind {
            let body = Fixtures.noise(count: TempFile.memoryLimit + 50_000)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp))
            temp.finishWriting()
            XCTAssertEqual(bytesOnDisk(temp), body, "the whole body is on disk without writeOut")
            // A named file is read by its name; an unnamed one, which has none, through its descriptor.
            XCTAssertEqual(contents(of: temp).0, kind == .named ? "file" : "descriptor")
            XCTAssertEqual(contents(of: temp).1, body)
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), body)
        }
    }

    func testABodyOfExactlyTheLimitStaysInMemory() throws {
        try forEachKind {
            let body = Fixtures.noise(count: TempFile.memoryLimit)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp, chunk: 5000))
            XCTAssertEqual(contents(of: temp).1, body)
            XCTAssertEqual(bytesOnDisk(temp), [])
        }
    }

    func testTruncateStartsAHeldBodyOver() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertNil(write(Array("first attempt".utf8), to: temp))
            temp.truncate()
            XCTAssertNil(write(Array("body".utf8), to: temp))
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), Array("body".utf8))
        }
    }

    func testTruncateEmptiesAStreamedBody() throws {
        try forEachKind {
            let temp = try folder.create()
            XCTAssertNil(write(Fixtures.noise(count: TempFile.memoryLimit + 1), to: temp))
            temp.truncate()
            XCTAssertNil(write(Array("body".utf8), to: temp))
            try temp.writeOut()
            XCTAssertEqual(bytesOnDisk(temp), Array("body".utf8))
        }
    }

    func testCommittingAHeldBodyWritesItFirst() throws {
        try forEachKind {
            let body = Fixtures.noise(count: 1000)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp))
            temp.finishWriting()
            XCTAssertEqual(try temp.commit(to: directory + "/a.jpg", overwrite: false), .saved)
            XCTAssertEqual(bytes(atPath: directory + "/a.jpg"), body)
            XCTAssertEqual(entries(), ["a.jpg"])
        }
    }

    func testACopyOfAHeldBodyIsComplete() throws {
        try forEachKind {
            let body = Fixtures.noise(count: 1000)
            let temp = try folder.create()
            XCTAssertNil(write(body, to: temp))
            XCTAssertEqual(try temp.place(at: directory + "/a.jpg", overwrite: false), .saved)
            XCTAssertEqual(try temp.copy(in: folder).commit(to: directory + "/b.jpg", overwrite: false), .saved)
            XCTAssertEqual(bytes(atPath: directory + "/b.jpg"), body)
        }
    }

    func testAStreamedBodyDecodesFromItsFileAsOftenAsNeeded() throws {
        try forEachKind {
            let jpeg = try Fixtures.jpeg(Fixtures.noise(count: 512 * 384 * 3), width: 512, height: 384)
            XCTAssertGreaterThan(jpeg.count, TempFile.memoryLimit, "the fixture must stream")
            let temp = try folder.create()
            XCTAssertNil(write(jpeg, to: temp))
            temp.finishWriting()
            for pass in 1...2 {
                let info = try temp.withContents { ImageCodec.verify($0, format: .jpeg, limits: DecodeLimits()) }.get()
                XCTAssertEqual(info.width, 512, "pass \(pass) reads from the start")
            }
            XCTAssertEqual(try temp.commit(to: directory + "/a.jpg", overwrite: false), .saved)
            XCTAssertEqual(bytes(atPath: directory + "/a.jpg"), jpeg, "decoding changed no byte")
        }
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
        let first = try TempFileDirectory(path: scratch.path).create(budget: budget)
        let second = try TempFileDirectory(path: scratch.path).create(budget: budget)
        let body = Fixtures.noise(count: 60_000)
        XCTAssertNil(body.withUnsafeBytes { first.write($0) })
        XCTAssertEqual(budget.heldBytes, 60_000, "the first body's buffer is taken from the budget")
        XCTAssertNil(body.withUnsafeBytes { second.write($0) })
        XCTAssertEqual(budget.heldBytes, 60_000, "the second did not fit: it went to its file")
        second.finishWriting()
        XCTAssertEqual([UInt8](try XCTUnwrap(FileManager.default.contents(atPath: second.path ?? "/proc/self/fd/\(second.descriptor)"))), body)
        try first.writeOut()
        XCTAssertEqual([UInt8](try XCTUnwrap(FileManager.default.contents(atPath: first.path ?? "/proc/self/fd/\(first.descriptor)"))), body)
    }

    func testHeldBytesReturnToTheBudgetWhenTheFileGoesAway() throws {
        let budget = HeldBodyBudget(limit: 1 << 20)
        var temp: TempFile? = try TempFileDirectory(path: scratch.path).create(budget: budget)
        XCTAssertNil(Fixtures.noise(count: 70_000).withUnsafeBytes { temp!.write($0) })
        XCTAssertGreaterThan(budget.heldBytes, 0)
        temp = nil
        XCTAssertEqual(budget.heldBytes, 0)
    }

    func testGrowingPastTheMemoryLimitReturnsTheBufferToTheBudget() throws {
        let budget = HeldBodyBudget(limit: 1 << 20)
        let temp = try TempFileDirectory(path: scratch.path).create(budget: budget)
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
