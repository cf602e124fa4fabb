import Foundation
import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

/// The gallery's records: what an item keeps, and the bytes they take on disk until the page is built.
final class GalleryRecordTests: XCTestCase {
    private func item(_ url: String, _ result: DownloadResult, line: Int = 3) -> ItemReport {
        ItemReport(position: ListPosition(listName: "urls.txt", line: line), displayURL: url, result: result)
    }

    func testASavedImageKeepsItsFileNameSizeAndHash() {
        var result = DownloadResult(status: .saved, paths: ["out/dir/cat.jpg"])
        result.format = .jpeg
        var image = ImageInfo(width: 300, height: 200, channels: 3, bitDepth: 8, orientation: 6, verified: true)
        result.image = image
        result.contentHash = String(repeating: "ab", count: 32)
        var record = GalleryRecord(item("http://x/cat.jpg", result))
        XCTAssertTrue(record.isTile)
        XCTAssertEqual(record.fileName, "cat.jpg")
        XCTAssertEqual([record.width, record.height], [200, 300], "the size as it is shown: oriented")
        XCTAssertTrue(record.verified)
        XCTAssertEqual(record.contentHash, result.contentHash)
        image.outputWidth = 64
        image.outputHeight = 96
        result.image = image
        record = GalleryRecord(item("http://x/cat.jpg", result))
        XCTAssertEqual([record.width, record.height], [64, 96], "the pixels written, for --save-as png")
    }

    func testFailuresKeepTheirClassMessageAndLine() {
        let record = GalleryRecord(item("http://x/a", .failed(DownloadError(.http, "HTTP 404"), attempts: 3), line: 12))
        XCTAssertFalse(record.isTile)
        XCTAssertEqual(record.errorClass, .http)
        XCTAssertEqual(record.message, "HTTP 404")
        XCTAssertEqual(record.attempts, 3)
        XCTAssertEqual("\(record.listName):\(record.line)", "urls.txt:12")
        let cancelled = GalleryRecord(item("http://x/b", DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled"))))
        XCTAssertFalse(cancelled.isTile)
        XCTAssertEqual(cancelled.errorClass, .cancelled)
    }

    func testASavedItemWithoutAFileIsListedAsAFailure() {
        let record = GalleryRecord(item("http://x/a", DownloadResult(status: .saved)))
        XCTAssertFalse(record.isTile)
        XCTAssertEqual(record.errorClass, .filesystem)
    }

    func testRecordsSurviveTheirBytesWhateverTheyHold() {
        var hostile = GalleryRecord(status: .failed, url: "http://x/<script>\"'\u{0}\n\t é 🐱", listName: "-", line: 1)
        hostile.errorClass = .notAnImage
        hostile.message = String(repeating: "\u{1B}[2J", count: 100)
        var tile = GalleryRecord(status: .skipped, url: "", listName: "list with spaces.txt", line: 99_999_999)
        tile.fileName = "a\tb.png"
        tile.format = .png
        tile.width = 1
        tile.height = 65_535
        tile.verified = true
        tile.contentHash = String(repeating: "0f", count: 32)
        tile.attempts = 7
        var bytes: [UInt8] = []
        hostile.encode(into: &bytes)
        tile.encode(into: &bytes)
        var offset = 0
        bytes.withUnsafeBytes { buffer in
            XCTAssertEqual(GalleryRecord.decode(buffer, offset: &offset), hostile)
            XCTAssertEqual(GalleryRecord.decode(buffer, offset: &offset), tile)
            XCTAssertEqual(offset, bytes.count)
            XCTAssertNil(GalleryRecord.decode(buffer, offset: &offset))
        }
        // A record cut anywhere reads as "not yet", never as a wrong record.
        for cut in [1, 4, 5, 20, bytes.count / 3] {
            var start = 0
            bytes.prefix(cut).withUnsafeBytes { XCTAssertNil(GalleryRecord.decode($0, offset: &start)) }
            XCTAssertEqual(start, 0)
        }
    }

    func testTheFileGivesRecordsBackInOrderInBatches() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-records-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try GalleryRecordFile(directory: directory.path)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "the file has no name")
        // Enough records (with long messages) to cross the reader's 256 KiB chunks many times.
        let count = 5000
        for line in 1...count {
            var record = GalleryRecord(status: .failed, url: "http://example.com/\(line)", listName: "l", line: line)
            record.message = String(repeating: "m", count: line % 300)
            file.append(record)
        }
        XCTAssertEqual(file.count, count)
        var lines: [Int] = []
        var sizes: [Int] = []
        file.forEachBatch(of: 256) { batch in
            sizes.append(batch.count)
            lines += batch.map(\.line)
            XCTAssertTrue(batch.allSatisfy { $0.message.count == $0.line % 300 })
        }
        XCTAssertEqual(lines, Array(1...count))
        XCTAssertEqual(sizes.dropLast().allSatisfy { $0 == 256 }, true)
        XCTAssertEqual(sizes.last, count % 256)
        XCTAssertNil(file.failure)
    }
}
