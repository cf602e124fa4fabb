import Foundation
import Synchronization
import XCTest
@testable import ImgFetchCore

/// The registry's semantics through the library API, with a mock transport that finishes
/// transfers when the test says so.
final class ImageDownloaderTests: MockDownloaderTestCase {
    private let body = MockTransport.jpegBody(count: 300, seed: 7)

    // MARK: - Coalescing

    func testDuplicateRequestsShareOneTransferAndEveryCallerGetsTheResult() throws {
        let url = try ParsedURL("http://example.com/cat.jpg")
        for id in 0..<5 { download(url, id: id) }
        XCTAssertEqual(transport.submitted.count, 1, "one URL in flight must make one transfer")
        XCTAssertEqual(downloader.registry.inFlightCount, 1)

        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(5))

        let results = try (0..<5).map { try XCTUnwrap(recorder.single($0), "caller \($0) got no single result") }
        XCTAssertEqual(results.map(\.status), Array(repeating: .saved, count: 5))
        XCTAssertEqual(results.map(\.coalesced), [false, true, true, true, true], "only the first caller owns the transfer")
        XCTAssertEqual(Set(results.flatMap(\.paths)), [directory.file("cat.jpg")])
        XCTAssertEqual(results.map(\.format), Array(repeating: .jpeg, count: 5))
        XCTAssertEqual(results.map(\.bytes), Array(repeating: Int64(body.count), count: 5))
        downloader.close()  // the body's temp file goes when the decode job that delivered it ends
        XCTAssertEqual(directory.entries(), ["cat.jpg"], "identical names are written once and the temp file is gone")
        XCTAssertEqual(directory.contents(of: "cat.jpg"), body)
        XCTAssertEqual(downloader.registry.inFlightCount, 0)
    }

    func testNormalizedURLsAreOneIdentity() throws {
        let spellings = [
            "HTTP://Example.COM:80/a.jpg#x",
            "http://example.com/a.jpg",
            "http://EXAMPLE.com/a.jpg#other-fragment",
            "http://example.com:80/a.jpg",
        ]
        for (id, spelling) in spellings.enumerated() { download(try ParsedURL(spelling), id: id) }
        XCTAssertEqual(transport.submitted.count, 1, "spellings of one normalized URL must coalesce")
        XCTAssertEqual(transport.submitted.first?.url.normalized, "http://example.com/a.jpg")

        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(spellings.count))
        XCTAssertEqual(spellings.indices.map { recorder.single($0)?.status }, Array(repeating: .saved, count: spellings.count))
    }

    func testDifferentPortsPathsAndSchemesAreDifferentURLs() throws {
        let urls = ["http://example.com/a.jpg", "http://example.com:8080/a.jpg", "https://example.com/a.jpg",
                    "http://example.com/A.jpg", "http://example.com/a.jpg?v=2"]
        for (id, url) in urls.enumerated() { download(try ParsedURL(url), name: "out-\(id).jpg", id: id) }
        XCTAssertEqual(transport.submitted.count, urls.count)
    }

    // MARK: - Progress

    func testProgressFansOutToEverySubscriber() throws {
        let url = try ParsedURL("http://example.com/progress.jpg")
        for id in 0..<3 { download(url, id: id) }
        let transfer = try XCTUnwrap(transport.submitted.first)

        transport.progress(transfer, received: 100, expected: 1_000)
        transport.progress(transfer, received: 600, expected: 1_000)
        transport.progress(transfer, received: 1_000, expected: 1_000)

        let expected = [CompletionRecorder.ProgressEvent(received: 100, expected: 1_000),
                        CompletionRecorder.ProgressEvent(received: 600, expected: 1_000),
                        CompletionRecorder.ProgressEvent(received: 1_000, expected: 1_000)]
        for id in 0..<3 { XCTAssertEqual(recorder.progressEvents(of: id), expected, "subscriber \(id)") }
    }

    func testASubscriberThatJoinsLateGetsOnlyLaterProgress() throws {
        let url = try ParsedURL("http://example.com/late.jpg")
        download(url, id: 0)
        let transfer = try XCTUnwrap(transport.submitted.first)
        transport.progress(transfer, received: 10, expected: nil)
        download(url, id: 1)
        transport.progress(transfer, received: 20, expected: nil)
        XCTAssertEqual(recorder.progressEvents(of: 0).map(\.received), [10, 20])
        XCTAssertEqual(recorder.progressEvents(of: 1).map(\.received), [20])
        XCTAssertEqual(recorder.progressEvents(of: 1).first?.expected, nil)
    }

    func testProgressIsWantedOnlyOnceACallerHasAHandler() throws {
        let url = try ParsedURL("http://example.com/quiet.jpg")
        downloader.download(url, completion: recorder.completion(0))
        let transfer = try XCTUnwrap(transport.submitted.first)
        XCTAssertFalse(transfer.progress.wanted.load(ordering: .relaxed), "no caller has a progress handler")
        download(url, id: 1)
        XCTAssertTrue(transfer.progress.wanted.load(ordering: .relaxed), "a caller with a handler joined")
        transport.progress(transfer, received: 10, expected: nil)
        XCTAssertEqual(recorder.progressEvents(of: 1).map(\.received), [10])
    }

    func testACancelledSubscriberGetsNoMoreProgress() throws {
        let url = try ParsedURL("http://example.com/progress.jpg")
        download(url, id: 0)
        let token = download(url, id: 1)
        let transfer = try XCTUnwrap(transport.submitted.first)
        transport.progress(transfer, received: 10, expected: 100)
        token.cancel()
        transport.progress(transfer, received: 50, expected: 100)
        XCTAssertEqual(recorder.progressEvents(of: 0).map(\.received), [10, 50])
        XCTAssertEqual(recorder.progressEvents(of: 1).map(\.received), [10])
    }

    func testTheConfiguredProgressIntervalReachesTheTransfer() throws {
        download(try ParsedURL("http://example.com/a.jpg"), id: 0)
        XCTAssertEqual(transport.submitted.first?.progress.interval, 100_000_000, "the default is 0.1 s")
    }

    // MARK: - Cancellation

    func testCancellingOneCallerKeepsTheTransferForTheOthers() throws {
        let url = try ParsedURL("http://example.com/keep.jpg")
        download(url, id: 0)
        let token = download(url, id: 1)
        download(url, id: 2)

        token.cancel()
        XCTAssertTrue(recorder.waitForTotal(1))
        let cancelled = try XCTUnwrap(recorder.single(1))
        XCTAssertEqual(cancelled.status, .cancelled)
        XCTAssertEqual(cancelled.error?.kind, .cancelled)
        XCTAssertTrue(transport.cancelled.isEmpty, "the transfer was cancelled although two callers still wait")

        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(3))
        XCTAssertEqual(recorder.single(0)?.status, .saved)
        XCTAssertEqual(recorder.single(2)?.status, .saved)
        XCTAssertEqual(recorder.single(0)?.coalesced, false)
        XCTAssertEqual(recorder.single(2)?.coalesced, true)
        downloader.close()
        XCTAssertEqual(recorder.results(of: 1).count, 1, "the cancelled caller got a second completion")
    }

    func testCancellingTheFirstCallerMakesTheNextOneTheOwner() throws {
        let url = try ParsedURL("http://example.com/owner.jpg")
        let first = download(url, name: "first.jpg", id: 0)
        download(url, name: "second.jpg", id: 1)
        first.cancel()
        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(recorder.single(0)?.status, .cancelled)
        XCTAssertEqual(recorder.single(1)?.status, .saved)
        XCTAssertEqual(recorder.single(1)?.coalesced, false)
        downloader.close()
        XCTAssertEqual(directory.entries(), ["second.jpg"], "a cancelled caller's file must not be written")
    }

    func testCancellingTheLastCallerCancelsTheTransferAndRemovesItsTempFile() throws {
        let url = try ParsedURL("http://example.com/gone.jpg")
        let tokens = (0..<3).map { download(url, id: $0) }
        let transfer = try XCTUnwrap(transport.submitted.first)
        XCTAssertEqual(directory.openFiles().count, 1, "the mock, like the engine, holds a temp file while the transfer runs")

        tokens[0].cancel()
        tokens[1].cancel()
        XCTAssertTrue(transport.cancelled.isEmpty)
        tokens[2].cancel()
        XCTAssertEqual(transport.cancelled.map(\.id), [transfer.id], "the last cancel must cancel the transfer")
        XCTAssertTrue(transfer.isCancelled)

        XCTAssertTrue(recorder.waitForTotal(3))
        for id in 0..<3 { XCTAssertEqual(recorder.single(id)?.status, .cancelled, "caller \(id)") }
        XCTAssertEqual(downloader.registry.inFlightCount, 0)
        XCTAssertEqual(directory.entries(), [], "a cancelled transfer left files behind")
        XCTAssertEqual(directory.openFiles(), [], "a cancelled transfer's temp file is still open")
        XCTAssertFalse(transport.finish(transfer, body: body), "a cancelled transfer cannot finish")
        downloader.close()
        XCTAssertEqual(recorder.total, 3, "the engine's cancelled outcome must not reach the callers a second time")
        XCTAssertEqual(transport.releaseCount, 1, "the cancelled outcome is released once")
    }

    func testAURLWhoseCallersAllCancelledIsFetchedAnew() throws {
        let url = try ParsedURL("http://example.com/again.jpg")
        download(url, id: 0).cancel()
        XCTAssertEqual(transport.cancelled.count, 1)
        download(url, id: 1)
        XCTAssertEqual(transport.submitted.count, 2, "a cancelled transfer is no result to serve")
        transport.finish(try XCTUnwrap(transport.submitted.last), body: body)
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(recorder.single(0)?.status, .cancelled)
        XCTAssertEqual(recorder.single(1)?.status, .saved)
        XCTAssertEqual(recorder.single(1)?.coalesced, false)
    }

    func testCancellingTwiceIsANoOp() throws {
        let url = try ParsedURL("http://example.com/twice.jpg")
        download(url, id: 0)
        let token = download(url, id: 1)
        token.cancel()
        token.cancel()
        XCTAssertTrue(recorder.waitForTotal(1))
        XCTAssertTrue(transport.cancelled.isEmpty, "a second cancel of one caller must not count as another caller leaving")
        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(2))
        downloader.close()
        XCTAssertEqual(recorder.results(of: 1).count, 1)
        XCTAssertEqual(recorder.single(0)?.status, .saved)
    }

    func testCancellingAfterCompletionIsANoOp() throws {
        let url = try ParsedURL("http://example.com/done.jpg")
        let tokens = (0..<2).map { download(url, id: $0) }
        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(2))
        tokens.forEach { $0.cancel() }
        downloader.close()
        XCTAssertTrue(transport.cancelled.isEmpty)
        XCTAssertEqual(recorder.total, 2)
        XCTAssertEqual(recorder.single(0)?.status, .saved)
        XCTAssertEqual(recorder.single(1)?.status, .saved)
        XCTAssertEqual(directory.contents(of: "done.jpg"), body, "a late cancel must not remove the saved file")
    }

    // MARK: - Results served within the run

    func testAURLRequestedAfterItFinishedIsServedWithoutANewTransfer() throws {
        let url = try ParsedURL("http://example.com/first.jpg")
        download(url, name: "first.jpg", id: 0)
        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(1))

        download(try ParsedURL("HTTP://EXAMPLE.com/first.jpg#again"), name: "second.jpg", id: 1)
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(transport.submitted.count, 1, "a finished URL was downloaded again")
        let served = try XCTUnwrap(recorder.single(1))
        XCTAssertEqual(served.status, .saved)
        XCTAssertTrue(served.coalesced)
        XCTAssertEqual(served.paths, [directory.file("second.jpg")])
        XCTAssertEqual(directory.contents(of: "second.jpg"), body)
        XCTAssertNotEqual(directory.inode(of: "second.jpg"), directory.inode(of: "first.jpg"))
        downloader.close()
        XCTAssertEqual(directory.entries(), ["first.jpg", "second.jpg"])
    }

    func testAFinishedURLRequestedUnderItsOwnNameAgainMakesNoTransfer() throws {
        let url = try ParsedURL("http://example.com/own.jpg")
        download(url, id: 0)
        transport.finish(try XCTUnwrap(transport.submitted.first), body: body)
        XCTAssertTrue(recorder.waitForTotal(1))
        download(url, id: 1)
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(transport.submitted.count, 1)
        let again = try XCTUnwrap(recorder.single(1))
        XCTAssertTrue([.saved, .skipped].contains(again.status), "\(again.status)")
        XCTAssertEqual(again.paths, [directory.file("own.jpg")])
        downloader.close()
        XCTAssertEqual(directory.entries(), ["own.jpg"])
    }

    // MARK: - Failures

    func testFailureFansOutToEverySubscriber() throws {
        let url = try ParsedURL("http://example.com/missing.jpg")
        for id in 0..<4 { download(url, name: "m\(id).jpg", id: id) }
        transport.fail(try XCTUnwrap(transport.submitted.first), DownloadError(.http, "HTTP 404"), httpStatus: 404)
        XCTAssertTrue(recorder.waitForTotal(4))
        for id in 0..<4 {
            let result = try XCTUnwrap(recorder.single(id))
            XCTAssertEqual(result.status, .failed)
            XCTAssertEqual(result.error, DownloadError(.http, "HTTP 404"))
            XCTAssertEqual(result.httpStatus, 404)
            XCTAssertEqual(result.attempts, 1)
            XCTAssertEqual(result.coalesced, id > 0)
        }
        XCTAssertEqual(directory.entries(), [], "a failed transfer left files behind")
        XCTAssertEqual(downloader.registry.inFlightCount, 0)
        XCTAssertEqual(transport.releaseCount, 1)
    }

    func testAFailureIsDeliveredOffTheTransportsThread() throws {
        // The engine reports a failed transfer on its own thread; a completion handler that blocks
        // there (a stdout pipe nobody reads) would hold up every transfer.
        let url = try ParsedURL("http://example.com/blocked.jpg")
        let gate = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        let delivered = DispatchSemaphore(value: 0)
        downloader.download(url) { _ in
            _ = gate.wait(timeout: .now() + 10)
            finished.store(true, ordering: .relaxed)
            delivered.signal()
        }
        transport.fail(try XCTUnwrap(transport.submitted.first), DownloadError(.http, "HTTP 404"), httpStatus: 404)
        XCTAssertFalse(finished.load(ordering: .relaxed), "the transport waited for the completion handler")
        gate.signal()
        XCTAssertEqual(delivered.wait(timeout: .now() + 10), .success)
    }

    func testACompletionHandlerThatBlocksHoldsUpNeitherTheIndexNorOtherPlacements() throws {
        // Results are delivered on the output stage's thread, and the index writer only announces
        // its commits: a stdout pipe nobody reads stops the result lines, not the index.
        let first = try ParsedURL("http://example.com/first.jpg")
        let second = try ParsedURL("http://example.com/second.jpg")
        let gate = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        downloader.download(first) { _ in
            blocked.signal()
            _ = gate.wait(timeout: .now() + 20)
        }
        downloader.download(second) { _ in }
        defer { gate.signal() }
        XCTAssertTrue(transport.waitForSubmissions(2))
        transport.finish(transport.submitted[0], body: MockTransport.jpegBody())
        XCTAssertEqual(blocked.wait(timeout: .now() + 10), .success)
        transport.finish(transport.submitted[1], body: MockTransport.jpegBody(seed: 1))
        let index = try XCTUnwrap(downloader.cacheIndex)
        let deadline = Date().addingTimeInterval(10)
        while index.entry(for: second.normalized) == nil && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(index.entry(for: second.normalized)?.files.map(\.name), ["second.jpg"],
                       "the second body was not placed and committed while the first result's handler blocked")
        XCTAssertNotNil(directory.contents(of: "second.jpg"))
    }

    func testABodyIsHashedOnlyWhereTheIndexCompares() throws {
        let url = try ParsedURL("http://example.com/hashed.jpg")
        download(url, id: 0)
        XCTAssertTrue(transport.waitForSubmissions(1))
        XCTAssertEqual(transport.submitted[0].request.digests, [], "a first download of original bytes has nothing to compare with")
        transport.finish(transport.submitted[0], body: MockTransport.jpegBody())
        XCTAssertTrue(recorder.waitForTotal(1))
        downloader.close()

        // The URL is indexed now: downloading it again compares the body with the indexed file.
        downloader = makeDownloader { $0.cachePolicy = .reload }
        download(url, id: 1)
        XCTAssertTrue(transport.waitForSubmissions(2))
        XCTAssertEqual(transport.submitted[1].request.digests, [.sha256])
        transport.finish(transport.submitted[1], body: MockTransport.jpegBody())
        XCTAssertTrue(recorder.waitForTotal(2))
        downloader.close()

        // A decoded output is not the body: its entry needs the body's hash from the start.
        downloader = makeDownloader { $0.saveAs = .pixels(.png) }
        download(try ParsedURL("http://example.com/pixels.jpg"), id: 2)
        XCTAssertTrue(transport.waitForSubmissions(3))
        XCTAssertEqual(transport.submitted[2].request.digests, [.sha256])
        downloader.close()
        downloader = makeDownloader { $0.hashesEveryBody = true }
        download(try ParsedURL("http://example.com/gallery.jpg"), id: 3)
        XCTAssertTrue(transport.waitForSubmissions(4))
        XCTAssertEqual(transport.submitted[3].request.digests, [.sha256])
    }

    func testAConvertedOutputCarriesTheSizeWritten() throws {
        downloader.close()
        downloader = makeDownloader { $0.saveAs = .pixels(.ppm) }
        download(try ParsedURL("http://example.com/small.png"), id: 0)
        XCTAssertTrue(transport.waitForSubmissions(1))
        transport.finish(transport.submitted[0], body: Data(try PNGSample.gradient(.rgb, bitDepth: 8).encoded()))
        XCTAssertTrue(recorder.waitForTotal(1))
        let result = try XCTUnwrap(recorder.single(0))
        XCTAssertEqual(result.status, .saved, "\(String(describing: result.error))")
        let written = try XCTUnwrap(result.paths.first.flatMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int })
        XCTAssertEqual(result.outputBytes, Int64(written))
        XCTAssertNotEqual(result.outputBytes, result.bytes, "PPM pixels are not the PNG body")
    }

    func testCancellingEverythingReportsEachItemAsItsOwnNotCoalesced() throws {
        let urls = try (0..<3).map { try ParsedURL("http://example.com/c\($0).jpg") }
        for (id, url) in urls.enumerated() { download(url, id: id) }
        download(urls[0], id: 3)
        XCTAssertTrue(transport.waitForSubmissions(3))
        downloader.cancelAll()
        XCTAssertTrue(recorder.waitForTotal(4))
        for id in 0..<3 {
            XCTAssertEqual(recorder.single(id)?.status, .cancelled)
            XCTAssertEqual(recorder.single(id)?.coalesced, false, "item \(id) shared no transfer with the others")
        }
        XCTAssertEqual(recorder.single(3)?.status, .cancelled)
    }

    func testAFailedURLRequestedAgainGetsTheSameFailureWithoutANewTransfer() throws {
        let url = try ParsedURL("http://example.com/broken.jpg")
        download(url, id: 0)
        transport.fail(try XCTUnwrap(transport.submitted.first), DownloadError(.network, "connection reset"))
        XCTAssertTrue(recorder.waitForTotal(1))
        download(url, id: 1)
        XCTAssertTrue(recorder.waitForTotal(2))
        XCTAssertEqual(transport.submitted.count, 1)
        XCTAssertEqual(recorder.single(1)?.status, .failed)
        XCTAssertEqual(recorder.single(1)?.error?.kind, .network)
        XCTAssertEqual(recorder.single(1)?.coalesced, true)
    }

    func testABodyThatIsNotAnImageFailsEverySubscriberAndLeavesNoFiles() throws {
        let url = try ParsedURL("http://example.com/page.jpg")
        for id in 0..<3 { download(url, name: "p\(id).jpg", id: id) }
        transport.finish(try XCTUnwrap(transport.submitted.first), body: MockTransport.htmlBody)
        XCTAssertTrue(recorder.waitForTotal(3))
        for id in 0..<3 {
            XCTAssertEqual(recorder.single(id)?.status, .failed)
            XCTAssertEqual(recorder.single(id)?.error?.kind, .notAnImage)
        }
        downloader.close()
        XCTAssertEqual(directory.entries(), [])
        XCTAssertEqual(transport.releaseCount, 1)
    }

    // MARK: - async

    func testImageAtReturnsTheResult() async throws {
        let downloader = try XCTUnwrap(downloader), transport = try XCTUnwrap(transport), body = body
        let url = try ParsedURL("http://example.com/async.jpg")
        let task = Task { try await downloader.image(at: url, options: DownloadOptions(fileName: "async-out.jpg")) }
        let transfer = await transport.submission(0)
        XCTAssertNotNil(transfer)
        if let transfer { transport.finish(transfer, body: body) }
        let result = try await task.value
        XCTAssertEqual(result.status, .saved)
        XCTAssertEqual(result.paths, [directory.file("async-out.jpg")])
    }

    func testImageAtThrowsTheItemsError() async throws {
        let downloader = try XCTUnwrap(downloader), transport = try XCTUnwrap(transport)
        let url = try ParsedURL("http://example.com/async-missing.jpg")
        let task = Task { try await downloader.image(at: url) }
        if let transfer = await transport.submission(0) {
            transport.fail(transfer, DownloadError(.http, "HTTP 410"), httpStatus: 410)
        } else {
            XCTFail("no transfer was submitted")
        }
        do {
            _ = try await task.value
            XCTFail("a failed item should throw")
        } catch let error as DownloadError {
            XCTAssertEqual(error, DownloadError(.http, "HTTP 410"))
        }
    }

    func testCancellingTheTaskCancelsTheToken() async throws {
        let downloader = try XCTUnwrap(downloader), transport = try XCTUnwrap(transport), body = body
        let url = try ParsedURL("http://example.com/async-cancel.jpg")
        let task = Task { try await downloader.image(at: url) }
        let submitted = await transport.submission(0)
        let transfer = try XCTUnwrap(submitted)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("a cancelled task should throw")
        } catch is CancellationError {
        } catch {
            XCTFail("expected CancellationError, got \(error)")
        }
        XCTAssertEqual(transport.cancelled.map(\.id), [transfer.id], "the task's token was the only caller: its transfer must be cancelled")
        XCTAssertFalse(transport.finish(transfer, body: body))
    }

    func testATaskCancelledBeforeItSubscribesStillThrowsCancellationError() async throws {
        let downloader = try XCTUnwrap(downloader), transport = try XCTUnwrap(transport)
        let url = try ParsedURL("http://example.com/async-early.jpg")
        let task = Task { try await downloader.image(at: url) }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("a cancelled task should throw")
        } catch is CancellationError {
        } catch {
            XCTFail("expected CancellationError, got \(error)")
        }
        XCTAssertEqual(transport.unfinished.count, 0, "the transfer of a cancelled task is left running")
    }

    // MARK: - Helpers

    @discardableResult
    private func download(_ url: ParsedURL, name: String? = nil, id: Int) -> DownloadToken {
        downloader.download(url, options: DownloadOptions(fileName: name),
                            progress: recorder.progress(id), completion: recorder.completion(id))
    }
}
