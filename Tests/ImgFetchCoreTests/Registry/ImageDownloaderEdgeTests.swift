import Foundation
import XCTest
@testable import ImgFetchCore

/// Edges found in review: a transfer cancelled under a caller that never withdrew, and a URL
/// whose every placement failed.
final class ImageDownloaderEdgeTests: XCTestCase {
    private var directory: ScratchDirectory!
    private var transport: MockTransport!
    private var recorder: CompletionRecorder!
    private var downloader: ImageDownloader!

    override func setUpWithError() throws {
        directory = try ScratchDirectory(prefix: "imgfetch-edges")
        transport = MockTransport()
        recorder = CompletionRecorder()
        var configuration = DownloaderConfiguration(outputDirectory: directory.path)
        configuration.decodeThreads = 2
        // The mock serves a JPEG signature and filler: these tests are about the registry, not the decoder.
        configuration.verifyImages = false
        downloader = ImageDownloader(configuration: configuration, transport: transport)
    }

    override func tearDown() {
        downloader.close()
        directory.remove()
    }

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
        var configuration = DownloaderConfiguration(outputDirectory: directory.path)
        configuration.verifyImages = false
        configuration.existingFiles = .overwrite
        downloader = ImageDownloader(configuration: configuration, transport: transport)
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
