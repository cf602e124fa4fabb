import Foundation
import XCTest
@testable import ImgFetchCore

/// The files a finished transfer leaves: one per distinct name, each its own copy of the one
/// verified body, existing files kept or replaced as configured, and no temp file behind. Each
/// test runs with both kinds of temp file (see `forEachTempFileKind`).
final class ImageDownloaderOutputTests: MockDownloaderTestCase {
    override var scratchPrefix: String { "imgfetch-output" }
    private let body = MockTransport.jpegBody(count: 300, seed: 7)

    func testDifferentNamesGetDistinctFilesWithIdenticalBytes() throws {
        try forEachTempFileKind {
            let url = try ParsedURL("http://example.com/shared.jpg")
            let names = ["one.jpg", "two.jpg", "three.jpg"]
            for (id, name) in names.enumerated() { download(url, name: name, id: id) }
            XCTAssertEqual(transport.submitted.count, 1)
            transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
            XCTAssertTrue(recorder.waitForTotal(3))

            for (id, name) in names.enumerated() {
                XCTAssertEqual(recorder.single(id)?.status, .saved, name)
                XCTAssertEqual(recorder.single(id)?.paths, [directory.file(name)])
                XCTAssertEqual(directory.contents(of: name), body, name)
            }
            downloader.close()
            XCTAssertEqual(directory.entries(), names.sorted(), "temp files were left behind")
            let inodes = names.compactMap { directory.inode(of: $0) }
            XCTAssertEqual(Set(inodes).count, 3, "each name must be its own file, not a hard link to another caller's")
            XCTAssertEqual(downloader.tempFiles.kind, tempFileKind ?? .unnamed)
            XCTAssertEqual(directory.openFiles(), [], "a temp file is still open")
        }
    }

    func testAStreamedBodyIsSavedWholeUnderEveryName() throws {
        try forEachTempFileKind {
            // Over TempFile.memoryLimit: the body streams to its file, and the copies read it from there.
            let large = MockTransport.jpegBody(count: 300_000, seed: 3)
            let url = try ParsedURL("http://example.com/large.jpg")
            let names = ["a.jpg", "b.jpg"]
            for (id, name) in names.enumerated() { download(url, name: name, id: id) }
            transport.finish(try XCTUnwrap(transport.submitted.first), body: large)
            XCTAssertTrue(recorder.waitForTotal(2))
            for (id, name) in names.enumerated() {
                XCTAssertEqual(recorder.single(id)?.status, .saved, name)
                XCTAssertEqual(directory.contents(of: name), large, name)
            }
            downloader.close()
            XCTAssertEqual(directory.entries(), names)
            XCTAssertEqual(directory.openFiles(), [])
        }
    }

    func testIdenticalNamesAreWrittenOnce() throws {
        try forEachTempFileKind {
            let url = try ParsedURL("http://example.com/x.jpg")
            for id in 0..<3 { download(url, name: "same.jpg", id: id) }
            transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
            XCTAssertTrue(recorder.waitForTotal(3))
            for id in 0..<3 {
                XCTAssertEqual(recorder.single(id)?.status, .saved)
                XCTAssertEqual(recorder.single(id)?.paths, [directory.file("same.jpg")])
            }
            downloader.close()
            XCTAssertEqual(directory.entries(), ["same.jpg"])
        }
    }

    func testAnExistingFileIsKeptUnlessOverwriting() throws {
        try forEachTempFileKind {
            for policy in [ExistingFilePolicy.overwrite, .skip] {
                downloader.close()
                downloader = makeDownloader { $0.existingFiles = policy }
                // Planted after planning (which skips existing files without a request): placement decides.
                let url = try ParsedURL("http://example.com/\(policy).jpg")
                let id = policy == .overwrite ? 0 : 1
                download(url, name: "\(policy).jpg", id: id)
                XCTAssertTrue(transport.waitForSubmissions(id + 1))
                XCTAssertTrue(FileManager.default.createFile(atPath: directory.file("\(policy).jpg"), contents: Data("old".utf8)))
                transport.finish(transport.submitted[id], body: body)
                XCTAssertTrue(recorder.waitForTotal(id + 1))
                XCTAssertEqual(recorder.single(id)?.status, policy == .overwrite ? .saved : .skipped)
                XCTAssertEqual(directory.contents(of: "\(policy).jpg"), policy == .overwrite ? body : Data("old".utf8))
            }
            downloader.close()
            XCTAssertEqual(directory.entries(), ["overwrite.jpg", "skip.jpg"])
            XCTAssertEqual(directory.openFiles(), [])
        }
    }

    func testACancelledTransferLeavesNoFile() throws {
        try forEachTempFileKind {
            let token = download(try ParsedURL("http://example.com/gone.jpg"), id: 0)
            XCTAssertEqual(directory.openFiles().count, 1, "the mock, like the engine, holds a temp file while the transfer runs")
            token.cancel()
            XCTAssertTrue(recorder.waitForTotal(1))
            downloader.close()
            XCTAssertEqual(directory.entries(), [])
            XCTAssertEqual(directory.openFiles(), [])
        }
    }

    @discardableResult
    private func download(_ url: ParsedURL, name: String? = nil, id: Int) -> DownloadToken {
        downloader.download(url, options: DownloadOptions(fileName: name),
                            progress: recorder.progress(id), completion: recorder.completion(id))
    }
}
