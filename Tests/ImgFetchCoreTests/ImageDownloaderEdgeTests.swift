import Foundation
import XCTest
@testable import ImgFetchCore

/// Edges found in review: a transfer cancelled under a caller that never withdrew, and a URL
/// whose every placement failed.
final class ImageDownloaderEdgeTests: MockDownloaderTestCase {
    override var scratchPrefix: String { "imgfetch-edges" }

    func testACallerStillSubscribedWhenItsTransferIsCancelledHearsCancelled() throws {
        // What cancelAll() racing a download() leaves behind: the transport cancels a transfer
        // whose caller never withdrew (and so was never told).
        let url = try ParsedURL("http://example.com/late.jpg")
        downloader.download(url, completion: recorder.completion(0))
        XCTAssertTrue(transport.waitForSubmissions(1))
        transport.cancelAll()
        XCTAssertTrue(recorder.waitForTotal(1), "the caller was never told")
        XCTAssertEqual(recorder.single(0)?.status, .cancelled)
        XCTAssertEqual(downloader.registry.inFlightCount, 0)
    }

    func testAURLWhosePlacementFailedIsFetchedAgainForALaterName() throws {
        // --overwrite, so no existing-file check skips the first name before the download.
        downloader.close()
        downloader = makeDownloader { $0.existingFiles = .overwrite }
        let url = try ParsedURL("http://example.com/a.jpg")
        // A non-empty directory where the first name's file should go makes its placement fail.
        try FileManager.default.createDirectory(atPath: directory.file("blocked.jpg/inside"), withIntermediateDirectories: true)
        downloader.download(url, options: DownloadOptions(fileName: "blocked.jpg"), completion: recorder.completion(0))
        XCTAssertTrue(transport.waitForSubmissions(1))
        XCTAssertTrue(transport.finish(transport.submitted[0], body: MockTransport.jpegBody()))
        XCTAssertTrue(recorder.waitForTotal(1))
        XCTAssertEqual(recorder.single(0)?.status, .failed)
        XCTAssertNotNil(recorder.single(0)?.error, "the failure says why")

        downloader.download(url, options: DownloadOptions(fileName: "fine.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(2), "a failed placement must not be served to later names")
        let second = try XCTUnwrap(transport.submitted.dropFirst().first)
        XCTAssertTrue(transport.finish(second, body: MockTransport.jpegBody()))
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(recorder.single(1)?.status, .saved)
    }
}
