import Dispatch
import Synchronization
import XCTest
@testable import ImgFetchCore

/// The registry on its own: which subscribe creates a transfer, what complete and cancel return.
final class CallbackRegistryTests: XCTestCase {
    private let key = "http://example.com/a.jpg"
    private var nextID = 0

    // MARK: - Subscribe

    func testFirstSubscriberCreatesTheTransferAndLaterOnesJoin() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        var made = 0
        guard case .created(let created) = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { made += 1; return transfer }) else {
            return XCTFail("the first subscriber did not create a transfer")
        }
        XCTAssertTrue(created === transfer)
        for _ in 0..<4 {
            guard case .joined = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { made += 1; return transfer }) else {
                return XCTFail("a later subscriber of the URL did not join the transfer in flight")
            }
        }
        XCTAssertEqual(made, 1, "a second transfer was made for a URL in flight")
        XCTAssertEqual(registry.inFlightCount, 1)
        XCTAssertEqual(registry.subscribers(of: key, transferID: transfer.id).count, 5)
    }

    func testDifferentKeysGetDifferentTransfers() throws {
        let registry = CallbackRegistry()
        let first = try makeTransfer()
        let second = try makeTransfer()
        guard case .created = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { first }),
              case .created = registry.subscribe(key: key + "?v=2", makeSubscriber(), makeTransfer: { second }) else {
            return XCTFail("each key should create its own transfer")
        }
        XCTAssertEqual(registry.inFlightCount, 2)
    }

    func testConcurrentSubscribersOfOneKeyMakeOneTransfer() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        let key = key
        let made = Atomic<Int>(0)
        let created = Atomic<Int>(0)
        let subscribers = (0..<2_000).map { makeSubscriber(id: $0) }
        DispatchQueue.concurrentPerform(iterations: subscribers.count) { index in
            let subscription = registry.subscribe(key: key, subscribers[index]) {
                made.add(1, ordering: .relaxed)
                return transfer
            }
            if case .created = subscription { created.add(1, ordering: .relaxed) }
        }
        XCTAssertEqual(made.load(ordering: .relaxed), 1)
        XCTAssertEqual(created.load(ordering: .relaxed), 1)
        XCTAssertEqual(Set(registry.subscribers(of: key, transferID: transfer.id).map(\.id)), Set(0..<2_000))
    }

    // MARK: - Progress snapshot

    func testSubscribersSnapshotIsEmptyForAnotherTransferOrKey() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        _ = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { transfer })
        XCTAssertEqual(registry.subscribers(of: key, transferID: transfer.id).count, 1)
        XCTAssertTrue(registry.subscribers(of: key, transferID: transfer.id + 1000).isEmpty)
        XCTAssertTrue(registry.subscribers(of: "http://other.example/", transferID: transfer.id).isEmpty)
    }

    // MARK: - Complete

    func testCompleteRemovesTheEntryAndReturnsSubscribersInOrder() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        let ids = [7, 3, 9]
        for id in ids { _ = registry.subscribe(key: key, makeSubscriber(id: id), makeTransfer: { transfer }) }
        guard case .done(let subscribers) = registry.complete(key: key, transferID: transfer.id, item: item(), isPlaced: { _ in true }) else {
            return XCTFail("complete with every subscriber served should be done")
        }
        XCTAssertEqual(subscribers.map(\.id), ids)
        XCTAssertEqual(registry.inFlightCount, 0)
    }

    func testALaterSubscriberIsServedFromTheFinishedItem() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        _ = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { transfer })
        _ = registry.complete(key: key, transferID: transfer.id, item: item(path: "/out/a.jpg"), isPlaced: { _ in true })
        var made = false
        guard case .finished(let finished) = registry.subscribe(key: key, makeSubscriber(), makeTransfer: { made = true; return transfer }) else {
            return XCTFail("a URL finished in this run should be served from its result")
        }
        XCTAssertFalse(made)
        XCTAssertEqual(finished.outputPath, "/out/a.jpg")
        XCTAssertEqual(finished.result.status, .saved)
        XCTAssertEqual(registry.inFlightCount, 0)
    }

    func testCompleteKeepsTheEntryWhileSubscribersAreUnserved() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        _ = registry.subscribe(key: key, makeSubscriber(id: 1), makeTransfer: { transfer })
        _ = registry.subscribe(key: key, makeSubscriber(id: 2), makeTransfer: { transfer })
        var served: Set<Int> = []

        guard case .morePending(let first) = registry.complete(key: key, transferID: transfer.id, item: item(), isPlaced: { served.contains($0.id) }) else {
            return XCTFail("unserved subscribers must keep the entry")
        }
        XCTAssertEqual(first.map(\.id), [1, 2])
        XCTAssertEqual(registry.inFlightCount, 1)
        served.formUnion([1, 2])

        // A subscriber that arrives now joins the entry and is reported as unserved next time.
        guard case .joined = registry.subscribe(key: key, makeSubscriber(id: 3), makeTransfer: { transfer }) else {
            return XCTFail("a subscriber arriving while the result is placed must join, not start a transfer")
        }
        guard case .morePending(let second) = registry.complete(key: key, transferID: transfer.id, item: item(), isPlaced: { served.contains($0.id) }) else {
            return XCTFail("the late subscriber was lost")
        }
        XCTAssertEqual(second.map(\.id), [3])
        served.insert(3)

        guard case .done(let all) = registry.complete(key: key, transferID: transfer.id, item: item(), isPlaced: { served.contains($0.id) }) else {
            return XCTFail("every subscriber is served")
        }
        XCTAssertEqual(all.map(\.id), [1, 2, 3])
        XCTAssertEqual(registry.inFlightCount, 0)
    }

    func testCompleteOfAStaleTransferLeavesTheNewEntryAlone() throws {
        let registry = CallbackRegistry()
        let old = try makeTransfer()
        let new = try makeTransfer()
        _ = registry.subscribe(key: key, makeSubscriber(id: 1), makeTransfer: { old })
        guard case .removedLast = registry.cancel(key: key, subscriberID: 1) else { return XCTFail("expected removedLast") }
        _ = registry.subscribe(key: key, makeSubscriber(id: 2), makeTransfer: { new })

        guard case .done(let none) = registry.complete(key: key, transferID: old.id, item: item(), isPlaced: { _ in true }) else {
            return XCTFail("a stale completion should be done with nobody")
        }
        XCTAssertTrue(none.isEmpty)
        XCTAssertEqual(registry.inFlightCount, 1)
        XCTAssertEqual(registry.subscribers(of: key, transferID: new.id).map(\.id), [2])
        // The stale result was not recorded as the URL's finished item.
        guard case .joined = registry.subscribe(key: key, makeSubscriber(id: 3), makeTransfer: { new }) else {
            return XCTFail("expected to join the new transfer")
        }
    }

    func testCompleteOfAnUnknownKeyIsDoneWithNobody() throws {
        let registry = CallbackRegistry()
        guard case .done(let none) = registry.complete(key: key, transferID: 1, item: item(), isPlaced: { _ in true }) else {
            return XCTFail("expected done")
        }
        XCTAssertTrue(none.isEmpty)
    }

    // MARK: - Cancel

    func testCancelRemovesOnlyThatSubscriber() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        for id in 1...3 { _ = registry.subscribe(key: key, makeSubscriber(id: id), makeTransfer: { transfer }) }
        guard case .removed(let removed) = registry.cancel(key: key, subscriberID: 2) else {
            return XCTFail("cancelling one of three should only remove it")
        }
        XCTAssertEqual(removed.id, 2)
        XCTAssertEqual(registry.subscribers(of: key, transferID: transfer.id).map(\.id), [1, 3])
        XCTAssertEqual(registry.inFlightCount, 1)
    }

    func testCancellingTheLastSubscriberHandsBackTheTransfer() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        for id in 1...2 { _ = registry.subscribe(key: key, makeSubscriber(id: id), makeTransfer: { transfer }) }
        guard case .removed = registry.cancel(key: key, subscriberID: 1) else { return XCTFail("expected removed") }
        guard case .removedLast(let last, let cancelled) = registry.cancel(key: key, subscriberID: 2) else {
            return XCTFail("the last subscriber's cancel should hand back the transfer")
        }
        XCTAssertEqual(last.id, 2)
        XCTAssertTrue(cancelled === transfer)
        XCTAssertEqual(registry.inFlightCount, 0)

        // A cancelled transfer is not a result: the next subscriber starts a new transfer.
        let next = try makeTransfer()
        guard case .created(let created) = registry.subscribe(key: key, makeSubscriber(id: 3), makeTransfer: { next }) else {
            return XCTFail("a URL whose callers all cancelled should be fetched anew")
        }
        XCTAssertTrue(created === next)
    }

    func testCancelTwiceOrAfterCompletionIsNotFound() throws {
        let registry = CallbackRegistry()
        let transfer = try makeTransfer()
        for id in 1...2 { _ = registry.subscribe(key: key, makeSubscriber(id: id), makeTransfer: { transfer }) }
        guard case .removed = registry.cancel(key: key, subscriberID: 1) else { return XCTFail("expected removed") }
        guard case .notFound = registry.cancel(key: key, subscriberID: 1) else { return XCTFail("a second cancel should do nothing") }
        _ = registry.complete(key: key, transferID: transfer.id, item: item(), isPlaced: { _ in true })
        guard case .notFound = registry.cancel(key: key, subscriberID: 2) else { return XCTFail("a cancel after completion should do nothing") }
        guard case .notFound = registry.cancel(key: "http://never.example/", subscriberID: 2) else { return XCTFail("unknown key") }
    }

    // MARK: - Helpers

    private func makeTransfer() throws -> Transfer {
        nextID += 1
        return Transfer(id: nextID, url: try ParsedURL(key), directory: TempFileDirectory(path: "/nonexistent"), maxSize: 1 << 20, onFinish: { _ in })
    }

    private func makeSubscriber(id: Int? = nil) -> Subscriber {
        let id = id ?? { nextID += 1; return nextID }()
        return Subscriber(id: id, name: OutputName(stem: "a", givenExtension: "jpg", isExplicit: false),
                          progress: nil, completion: { _ in }, subscribedAt: .now())
    }

    private func item(path: String? = nil) -> FinishedItem {
        FinishedItem(result: DownloadResult(status: .saved, paths: path.map { [$0] } ?? []), outputPath: path)
    }
}
