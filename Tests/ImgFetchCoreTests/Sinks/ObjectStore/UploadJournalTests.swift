import Foundation
import XCTest
@testable import ImgFetchCore

/// The work directory's note of its multipart uploads in progress, and the store's list of them.
final class UploadJournalTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func testAnUploadIsNotedUntilItIsOverWhateverItsKey() throws {
        let journal = UploadJournal(workDirectory: directory.path)
        XCTAssertEqual(journal.entries(), [], "no folder yet: nothing in progress")
        let plain = UploadJournal.Entry(bucket: "pics", key: "set/000000.tar", uploadID: "abc.DEF-1")
        let odd = UploadJournal.Entry(bucket: "pics", key: "set/two\nlines é.tar", uploadID: "x/y+z==")
        let first = try XCTUnwrap(journal.record(plain))
        let second = try XCTUnwrap(journal.record(odd))
        XCTAssertEqual(Set(journal.entries().map(\.uploadID)), ["abc.DEF-1", "x/y+z=="])
        XCTAssertEqual(journal.entries().first { $0.uploadID == "x/y+z==" }, odd)
        XCTAssertEqual(UploadJournal(workDirectory: directory.path).entries().count, 2, "a later run reads them")
        first.remove()
        XCTAssertEqual(journal.entries(), [odd])
        second.remove()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: journal.directory), [])
    }

    func testAnUploadInProgressCannotBeClaimedUntilItsMakerLetsGo() throws {
        let journal = UploadJournal(workDirectory: directory.path)
        var note = journal.record(UploadJournal.Entry(bucket: "b", key: "k", uploadID: "live"))
        XCTAssertNotNil(note)
        // Another run (flock is per open file, so this process stands in for it) finds it held.
        XCTAssertNil(journal.claim(uploadID: "live"), "a live upload is not an earlier run's")
        note = nil  // its maker ended (a kill closes the file too) without completing it
        let claimed = try XCTUnwrap(journal.claim(uploadID: "live"))
        XCTAssertNil(journal.claim(uploadID: "live"), "one claimant at a time")
        claimed.remove()
        XCTAssertEqual(journal.entries(), [])
        XCTAssertNil(journal.claim(uploadID: "never noted"))
    }

    func testFilesThatAreNotNotesArePassedOver() throws {
        let journal = UploadJournal(workDirectory: directory.path)
        let note = journal.record(UploadJournal.Entry(bucket: "b", key: "k", uploadID: "u"))
        XCTAssertNotNil(note)
        // A note whose name is not its upload's hash, a truncated one, a stray temp file.
        try "b\nother\nk".write(toFile: journal.directory + "/" + String(repeating: "a", count: 64), atomically: true, encoding: .utf8)
        try "b\n".write(toFile: journal.directory + "/" + String(repeating: "b", count: 64), atomically: true, encoding: .utf8)
        try "junk".write(toFile: journal.directory + "/note.tmp", atomically: true, encoding: .utf8)
        XCTAssertEqual(journal.entries(), [UploadJournal.Entry(bucket: "b", key: "k", uploadID: "u")])
    }

    func testAJournalThatCannotBeWrittenCostsNothingButTheNote() throws {
        // The work directory is a file: nothing can be noted, and nothing fails.
        let file = directory.appendingPathComponent("file").path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let journal = UploadJournal(workDirectory: file)
        XCTAssertNil(journal.record(UploadJournal.Entry(bucket: "b", key: "k", uploadID: "u")))
        XCTAssertEqual(journal.entries(), [])
    }

    func testTheStoresListOfUploadsIsReadPageByPage() {
        let page = """
            <?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult><Bucket>pics</Bucket><IsTruncated>true</IsTruncated>\
            <NextKeyMarker>set/b&amp;c.tar</NextKeyMarker><NextUploadIdMarker>id2</NextUploadIdMarker>\
            <Upload><Key>set/a.tar</Key><UploadId>id1</UploadId><Initiated>2026-12-04T10:00:00.000Z</Initiated></Upload>\
            <Upload><Key>set/b&amp;c.tar</Key><UploadId>id2</UploadId></Upload>\
            <Upload><Key>no id</Key></Upload></ListMultipartUploadsResult>
            """
        let parsed = S3Client.parseUploads(Array(page.utf8))
        XCTAssertEqual(parsed.uploads, [S3Client.IncompleteUpload(key: "set/a.tar", uploadID: "id1", initiated: 1_796_378_400),
                                        S3Client.IncompleteUpload(key: "set/b&c.tar", uploadID: "id2", initiated: nil)])
        XCTAssertEqual(parsed.next?.key, "set/b&c.tar")
        XCTAssertEqual(parsed.next?.upload, "id2")
        let last = S3Client.parseUploads(Array("<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>".utf8))
        XCTAssertEqual(last.uploads, [])
        XCTAssertNil(last.next)
    }
}
