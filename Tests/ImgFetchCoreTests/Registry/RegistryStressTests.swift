import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import ImgFetchCore

/// Many threads subscribing, cancelling and completing at once: every completion fires exactly
/// once, nobody hangs, and the registry ends empty.
final class RegistryStressTests: MockDownloaderTestCase {
    private let body = MockTransport.jpegBody(count: 120, seed: 3)
    override var scratchPrefix: String { "imgfetch-stress" }

    // MARK: - The finish/subscribe window

    /// One thread finishes a transfer while others subscribe to its URL: each subscriber lands
    /// before the finish, in the window while the result is being placed and the entry removed,
    /// or after it; in every case it gets exactly one completion.
    func testSubscribersArrivingWhileATransferFinishesAreNeverLost() throws {
        let iterations = 300
        let lateSubscribers = 7
        let perIteration = lateSubscribers + 1
        let windowHits = Atomic<Int>(0)
        let afterFinish = Atomic<Int>(0)
        let (downloader, transport, recorder, body) = (downloader!, transport!, recorder!, body)

        for iteration in 0..<iterations {
            let url = try ParsedURL("http://race.example/i\(iteration).jpg")
            let base = iteration * perIteration
            downloader.download(url, completion: recorder.completion(base))
            let transfer = try XCTUnwrap(transport.transfer(for: url))
            // The finisher's place among the subscribers moves, so some subscribe before the finish too.
            let finisher = iteration % perIteration
            DispatchQueue.concurrentPerform(iterations: perIteration) { index in
                if index == finisher {
                    transport.finish(transfer, body: body)
                    return
                }
                // Half the late callers want their own file, half share the URL's name.
                let name = index.isMultiple(of: 2) ? "i\(iteration)-\(index).jpg" : nil
                let finishedBefore = transport.hasFinished(transfer)
                let caller = index < finisher ? index + 1 : index  // 1...lateSubscribers
                downloader.download(url, options: DownloadOptions(fileName: name), completion: recorder.completion(base + caller))
                if finishedBefore {
                    afterFinish.add(1, ordering: .relaxed)
                    // The entry of this transfer is only ever removed: still there now means it was
                    // there when this caller subscribed, so it joined after the transfer had finished.
                    if !downloader.registry.subscribers(of: url.normalized, transferID: transfer.id).isEmpty {
                        windowHits.add(1, ordering: .relaxed)
                    }
                }
            }
            // The issue allows serving a late caller by a new transfer: finish any such transfer too.
            transport.finishAll(body: body)
        }

        let expected = iterations * perIteration
        XCTAssertTrue(recorder.waitForTotal(expected, timeout: 60),
                      "subscribers hung: \(recorder.total) of \(expected) completions arrived")
        downloader.close()

        let counts = recorder.countsByID
        let wrong = (0..<expected).filter { counts[$0] != 1 }
        XCTAssertEqual(wrong.count, 0, "completions not exactly once for ids \(wrong.prefix(20)): \(wrong.prefix(20).map { counts[$0] ?? 0 })")
        for id in 0..<expected {
            guard let result = recorder.single(id) else { continue }
            XCTAssertTrue([.saved, .skipped].contains(result.status), "id \(id): \(result.status) \(result.error?.message ?? "")")
            if let path = result.paths.first {
                XCTAssertEqual(FileManager.default.contents(atPath: path), body, "id \(id): \(path)")
            }
        }
        XCTAssertEqual(downloader.registry.inFlightCount, 0)
        XCTAssertEqual(directory.tempFiles(), [])
        print("finish/subscribe race: \(afterFinish.load(ordering: .relaxed)) subscriptions after the finish began, "
              + "\(windowHits.load(ordering: .relaxed)) of them seen inside the not-yet-removed entry; "
              + "\(transport.submitted.count) transfers for \(iterations) URLs")
    }

    // MARK: - Stress

    /// 2,000 URLs × 4 callers: subscribes, cancels (one caller, or all) and completions (fetched or
    /// failed) of neighbouring URLs run interleaved on every thread of `concurrentPerform`.
    func testManyThreadsSubscribingCancellingAndCompleting() throws {
        let urlCount = 2_000
        let callersPerURL = 4
        let callers = urlCount * callersPerURL
        let (downloader, transport, recorder, body) = (downloader!, transport!, recorder!, body)
        let urls = try (0..<urlCount).map { try ParsedURL("http://stress\($0 % 16).example/u\($0).jpg") }
        let failsURL: @Sendable (Int) -> Bool = { $0 % 7 == 3 }

        enum Operation {
            case subscribe(url: Int, caller: Int)
            case cancel(url: Int, caller: Int)
            case complete(url: Int)
        }
        var keyed: [(key: Double, operation: Operation)] = []
        for url in 0..<urlCount {
            let key = { Double(url) + Double.random(in: 0..<3) }
            for caller in 0..<callersPerURL { keyed.append((key(), .subscribe(url: url, caller: caller))) }
            let cancelled = url.isMultiple(of: 5) ? Array(0..<callersPerURL) : url.isMultiple(of: 3) ? [1] : []
            for caller in cancelled { keyed.append((key(), .cancel(url: url, caller: caller))) }
            keyed.append((key(), .complete(url: url)))
        }
        // Neighbouring URLs' operations interleave, so several threads work on one URL at once.
        let operations = keyed.sorted { $0.key < $1.key }.map(\.operation)

        let tokens = LockedState<[DownloadToken?]>(Array(repeating: nil, count: callers))
        let cancelCalled = LockedState<Set<Int>>([])
        let started = DispatchTime.now()

        DispatchQueue.concurrentPerform(iterations: operations.count) { index in
            switch operations[index] {
            case .subscribe(let url, let caller):
                let id = url * callersPerURL + caller
                let name = caller.isMultiple(of: 2) ? nil : "u\(url)-c\(caller).jpg"
                let token = downloader.download(urls[url], options: DownloadOptions(fileName: name),
                                                completion: recorder.completion(id))
                tokens.withLock { $0[id] = token }
            case .cancel(let url, let caller):
                let id = url * callersPerURL + caller
                guard let token = tokens.withLock({ $0[id] }) else { return }  // not subscribed yet
                cancelCalled.withLock { _ = $0.insert(id) }
                token.cancel()
            case .complete(let url):
                guard let transfer = transport.transfer(for: urls[url]) else { return }  // finished below
                if failsURL(url) {
                    transport.fail(transfer, DownloadError(.http, "HTTP 503"), httpStatus: 503)
                } else {
                    transport.finish(transfer, body: body)
                }
            }
        }
        // Transfers whose completion ran before they existed, or that a late caller restarted.
        transport.finishAll(body: body)

        XCTAssertTrue(recorder.waitForTotal(callers, timeout: 60), "callers hung: \(recorder.total) of \(callers) completions")
        downloader.close()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9

        let counts = recorder.countsByID
        let wrong = (0..<callers).filter { counts[$0] != 1 }
        XCTAssertEqual(wrong.count, 0, "completions not exactly once for ids \(wrong.prefix(20)): \(wrong.prefix(20).map { counts[$0] ?? 0 })")

        let cancelRequests = cancelCalled.withLock { $0 }
        var statuses: [DownloadResult.Status: Int] = [:]
        var cancelledWithFile = 0
        let caller = { (id: Int) in id % callersPerURL }
        for id in 0..<callers {
            guard let result = recorder.single(id) else { continue }
            statuses[result.status, default: 0] += 1
            switch result.status {
            case .cancelled:
                XCTAssertTrue(cancelRequests.contains(id), "caller \(id) never cancelled but got `cancelled`")
                // Not asserted (the issue does not say): a caller that cancels while the body is being
                // placed may still find its own file written.
                if !caller(id).isMultiple(of: 2), FileManager.default.fileExists(atPath: directory.file("u\(id / callersPerURL)-c\(caller(id)).jpg")) {
                    cancelledWithFile += 1
                }
            case .failed:
                XCTAssertTrue(failsURL(id / callersPerURL), "caller \(id) failed: \(result.error?.message ?? "")")
            case .saved, .skipped:
                if let path = result.paths.first {
                    XCTAssertEqual(FileManager.default.contents(atPath: path), body, "caller \(id): \(path)")
                }
            }
        }

        XCTAssertEqual(downloader.registry.inFlightCount, 0, "the registry did not end empty")
        XCTAssertEqual(transport.unfinished.count, 0)
        XCTAssertEqual(transport.releaseCount, transport.submitted.count, "every transfer outcome is released exactly once")
        XCTAssertEqual(directory.tempFiles(), [], "temp files were left behind")
        print("registry stress: \(operations.count) operations, \(transport.submitted.count) transfers, "
              + "\(transport.cancelled.count) transfer cancels, results \(statuses.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }), "
              + "\(cancelledWithFile) cancelled callers whose own file was written anyway, "
              + String(format: "%.2f s", seconds))
    }
}
