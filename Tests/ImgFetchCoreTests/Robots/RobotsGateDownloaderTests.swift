import XCTest
@testable import ImgFetchCore

/// `--robots` inside the downloader, driven through the mock transport: the host's items wait
/// for its robots.txt, and every one of them gets exactly one result whatever happens meanwhile.
final class RobotsGateDownloaderTests: MockDownloaderTestCase {
    override var scratchPrefix: String { "imgfetch-robots" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        downloader.close()
        downloader = makeDownloader { $0.obeysRobots = true }
    }

    private func url(_ path: String) throws -> ParsedURL { try ParsedURL("http://robots.example\(path)") }

    func testItemsWaitForRobotsTxtThenGoOnOrAreSkipped() throws {
        downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        downloader.download(try url("/private/b.jpg"), completion: recorder.completion(2))
        XCTAssertTrue(transport.waitForSubmissions(1))
        XCTAssertEqual(transport.submitted.map(\.url.normalized), ["http://robots.example/robots.txt"], "an image went before robots.txt")
        XCTAssertTrue(transport.finish(transport.submitted[0], body: Data("User-agent: *\nDisallow: /private/\n".utf8)))
        XCTAssertTrue(transport.waitForSubmissions(2))
        XCTAssertEqual(transport.submitted[1].url.normalized, "http://robots.example/a.jpg")
        XCTAssertTrue(transport.finish(transport.submitted[1], body: MockTransport.jpegBody()))
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(recorder.single(1)?.status, .saved)
        XCTAssertEqual(recorder.single(2)?.status, .skipped)
        XCTAssertEqual(recorder.single(2)?.skipReason, "robots.txt: Disallow: /private/ (User-agent: *)")
    }

    func testATokenCancelsAnItemWhileItWaitsAndItIsNotFetchedLater() throws {
        let token = downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(1))
        token.cancel()
        XCTAssertTrue(recorder.waitForTotal(1))
        XCTAssertEqual(recorder.single(1)?.status, .cancelled)
        XCTAssertTrue(transport.finish(transport.submitted[0], body: Data("User-agent: *\nAllow: /\n".utf8)))
        downloader.close()
        XCTAssertEqual(transport.submitted.count, 1, "the cancelled item was fetched once robots.txt came")
        XCTAssertEqual(recorder.results(of: 1).count, 1)
    }

    func testCancelAllLetsWaitingItemsGoAndLaterOnesThroughWithOneResultEach() throws {
        downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(1))
        downloader.cancelAll(failingWith: DownloadError(.deadline, "late"))
        // The robots.txt fetch is cancelled by the transport; an item that comes now is not held.
        downloader.download(try url("/b.jpg"), completion: recorder.completion(2))
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(recorder.single(1)?.error?.kind, .deadline)
        XCTAssertEqual(recorder.single(2)?.error?.kind, .deadline)
    }

    func testAHostWhoseRobotsTxtCannotBeFetchedFailsItsItemsWithoutARequest() throws {
        downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(1))
        XCTAssertTrue(transport.fail(transport.submitted[0], DownloadError(.dns, "could not resolve host robots.example")))
        XCTAssertTrue(recorder.waitForTotal(1))
        let result = try XCTUnwrap(recorder.single(1))
        XCTAssertEqual(result.status, .failed)
        XCTAssertEqual(result.error?.kind, .dns)
        XCTAssertTrue(result.error?.message.contains("robots.txt could not be fetched (could not resolve host") == true)
        XCTAssertEqual(transport.submitted.count, 1)
    }

    func testAnErrorStatusAfterABodyBeganIsNoAnswer() throws {
        downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(1))
        // A 200 cut off mid-body: the failure carries the status, but it is no answer (not "allow all").
        XCTAssertTrue(transport.fail(transport.submitted[0], DownloadError(.network, "body shorter than announced"), httpStatus: 200))
        XCTAssertTrue(recorder.waitForTotal(1))
        XCTAssertEqual(recorder.single(1)?.status, .failed)
        XCTAssertEqual(transport.submitted.count, 1)
    }

    func testCloseWaitsForItemsStillWaitingForRobotsTxt() throws {
        downloader.download(try url("/a.jpg"), completion: recorder.completion(1))
        XCTAssertTrue(transport.waitForSubmissions(1))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { [transport] in
            transport!.finish(transport!.submitted[0], body: Data("User-agent: *\nDisallow:\n".utf8))
        }
        // The engine (here the mock) is closed only once the waiting item has been handed to it.
        downloader.close()
        XCTAssertEqual(transport.submitted.map(\.url.normalized), ["http://robots.example/robots.txt", "http://robots.example/a.jpg"])
    }
}
