import Foundation
import XCTest
@testable import ImgFetchCore

/// The directory sink's one primitive, `put`: place unless the file already holds the output,
/// keep someone else's file, and record in the index what is now at the name.
final class DirectorySinkTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var index: CacheIndex!
    private var delivery: ResultDelivery!
    private var sink: DirectorySink!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
        index = try CacheIndex(directory: scratch.path) { _ in }
        delivery = ResultDelivery()
        let configuration = DownloaderConfiguration(outputDirectory: scratch.path)
        let placer = OutputPlacer(directory: scratch.path, tempFiles: TempFileDirectory(path: scratch.path), existingFiles: .skip)
        let output = OutputStage(registry: CallbackRegistry(), delivery: delivery, index: index,
                                 diskSpace: DiskSpaceGuard(path: scratch.path, minimumFree: 0))
        sink = try DirectorySink(configuration: configuration, placer: placer, index: index, stage: output)
    }

    override func tearDown() {
        index.close()
        delivery.close()
        try? FileManager.default.removeItem(atPath: scratch.path)
    }

    private func write(_ name: String, _ text: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: scratch.file(name), contents: Data(text.utf8)))
    }

    private func text(_ name: String) -> String? {
        scratch.contents(of: name).map { String(decoding: $0, as: UTF8.self) }
    }

    private func entry(_ url: String, files: [String]) -> CacheEntry {
        CacheEntry(url: url, kind: "original", format: .jpeg, image: nil, headers: ResponseCacheHeaders(),
                   freshness: CacheFreshness(lifetime: 0, initialAge: 0, responseTime: 0), bodySize: 4, contentHash: "h",
                   files: files.map { CacheEntry.File(name: $0, stamp: sink.placer.stamp(of: $0)!) })
    }

    func testANewEntryListsEveryNameIncludingTheOnesThatAlreadyHeldTheBody() throws {
        write("source.jpg", "body")
        write("same.jpg", "body")
        let recorder = CacheRecorder(index: index, key: "http://h/a", newEntry: entry("http://h/a", files: []))
        XCTAssertEqual(try sink.put(.file(at: scratch.file("source.jpg")), as: "same.jpg", replaceable: [], isThere: true,
                                     recorder: recorder), .unchanged)
        XCTAssertEqual(try sink.put(.file(at: scratch.file("source.jpg")), as: "new.jpg", replaceable: [], recorder: recorder), .saved)
        index.flush()
        XCTAssertEqual(index.entry(for: "http://h/a").map { Set($0.files.map(\.name)) }, ["same.jpg", "new.jpg"])
        XCTAssertEqual(text("new.jpg"), "body")
    }

    func testSomeoneElsesFileIsKeptAndNotIndexed() throws {
        write("source.jpg", "body")
        write("theirs.jpg", "not ours")
        index.store(entry("http://h/b", files: ["source.jpg"]))
        let recorder = CacheRecorder(index: index, joining: "http://h/b")
        XCTAssertEqual(try sink.put(.file(at: scratch.file("source.jpg")), as: "theirs.jpg", replaceable: ["source.jpg"],
                                     recorder: recorder), .existed)
        XCTAssertEqual(try sink.put(.file(at: scratch.file("source.jpg")), as: "source.jpg", replaceable: ["source.jpg"],
                                     isThere: true, recorder: recorder), .unchanged)
        index.flush()
        XCTAssertEqual(text("theirs.jpg"), "not ours")
        XCTAssertEqual(index.entry(for: "http://h/b")?.files.map(\.name), ["source.jpg"], "only files that hold the body are indexed")
    }

    func testAResponseThatMayNotBeStoredForgetsTheURLAndTheName() throws {
        write("source.jpg", "body")
        write("old.jpg", "old")
        index.store(entry("http://h/c", files: ["old.jpg"]))
        let recorder = CacheRecorder(index: index, key: "http://h/c", newEntry: nil)
        XCTAssertEqual(try sink.put(.file(at: scratch.file("source.jpg")), as: "old.jpg", replaceable: ["old.jpg"],
                                     recorder: recorder), .saved)
        index.flush()
        XCTAssertNil(index.entry(for: "http://h/c"))
        XCTAssertEqual(text("old.jpg"), "body")
    }
}
