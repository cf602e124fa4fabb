import XCTest
@testable import ImgFetchCore

final class DequeTests: XCTestCase {
    func testEmpty() {
        var deque = Deque<Int>()
        XCTAssertTrue(deque.isEmpty)
        XCTAssertEqual(deque.count, 0)
        XCTAssertNil(deque.first)
        XCTAssertNil(deque.last)
        XCTAssertNil(deque.popFirst())
        XCTAssertNil(deque.popLast())
    }

    func testAppendThenPopFirstIsFIFO() {
        var deque = Deque<Int>()
        for value in 0..<100 { deque.append(value) }
        XCTAssertEqual(deque.count, 100)
        XCTAssertEqual(deque.first, 0)
        XCTAssertEqual(deque.last, 99)
        XCTAssertEqual(popAllFirst(&deque), Array(0..<100))
        XCTAssertTrue(deque.isEmpty)
    }

    func testAppendThenPopLastIsLIFO() {
        var deque = Deque<Int>()
        for value in 0..<100 { deque.append(value) }
        var popped: [Int] = []
        while let value = deque.popLast() { popped.append(value) }
        XCTAssertEqual(popped, Array((0..<100).reversed()))
    }

    func testPrependBuildsReversedOrder() {
        var deque = Deque<Int>()
        for value in 0..<40 { deque.prepend(value) }
        XCTAssertEqual(deque.first, 39)
        XCTAssertEqual(deque.last, 0)
        XCTAssertEqual(popAllFirst(&deque), Array((0..<40).reversed()))
    }

    func testPrependOnEmptyDeque() {
        var deque = Deque<String>()
        deque.prepend("a")
        XCTAssertEqual(deque.first, "a")
        XCTAssertEqual(deque.last, "a")
        XCTAssertEqual(deque.popLast(), "a")
        XCTAssertTrue(deque.isEmpty)
    }

    func testWrapAroundThenGrowKeepsOrder() {
        var deque = Deque<Int>()
        // Move the head into the middle of the 16-slot buffer, then fill past the end so it wraps.
        for value in 0..<10 { deque.append(value) }
        for _ in 0..<8 { _ = deque.popFirst() }
        for value in 10..<24 { deque.append(value) }
        XCTAssertEqual(deque.count, 16)
        // Full and wrapped: the next append grows the storage.
        deque.append(24)
        deque.prepend(7)
        XCTAssertEqual(deque.count, 18)
        XCTAssertEqual(popAllFirst(&deque), Array(7...24))
    }

    func testPrependWrapsBelowIndexZero() {
        var deque = Deque<Int>()
        deque.append(1)
        deque.prepend(0)
        deque.prepend(-1)
        deque.append(2)
        XCTAssertEqual(deque.first, -1)
        XCTAssertEqual(deque.last, 2)
        XCTAssertEqual(popAllFirst(&deque), [-1, 0, 1, 2])
    }

    func testReleasesPoppedElements() {
        final class Token {}
        weak var weakToken: Token?
        var deque = Deque<Token>()
        do {
            let token = Token()
            weakToken = token
            deque.append(token)
        }
        XCTAssertNotNil(weakToken)
        _ = deque.popFirst()
        XCTAssertNil(weakToken, "the deque kept a popped element alive")
    }

    func testMatchesAnArrayModelOverRandomOperations() {
        var generator = SplitMix64(seed: 0x1234_5678_9ABC_DEF0)
        var deque = Deque<Int>()
        var model: [Int] = []
        for step in 0..<10_000 {
            // Bias towards insertion early and removal late, so the deque both grows and drains.
            let insertBias: UInt64 = step < 6_000 ? 6 : 4
            let roll = generator.next() % 10
            let value = Int(truncatingIfNeeded: generator.next() % 1_000_000)
            switch roll {
            case 0..<(insertBias / 2):
                deque.append(value)
                model.append(value)
            case (insertBias / 2)..<insertBias:
                deque.prepend(value)
                model.insert(value, at: 0)
            case insertBias..<(insertBias + (10 - insertBias) / 2):
                XCTAssertEqual(deque.popFirst(), model.isEmpty ? nil : model.removeFirst(), "step \(step)")
            default:
                XCTAssertEqual(deque.popLast(), model.popLast(), "step \(step)")
            }
            XCTAssertEqual(deque.count, model.count, "step \(step)")
            XCTAssertEqual(deque.first, model.first, "step \(step)")
            XCTAssertEqual(deque.last, model.last, "step \(step)")
            XCTAssertEqual(deque.isEmpty, model.isEmpty, "step \(step)")
            if deque.count != model.count { return }
        }
        XCTAssertEqual(popAllFirst(&deque), model)
    }

    private func popAllFirst<Element>(_ deque: inout Deque<Element>) -> [Element] {
        var popped: [Element] = []
        while let element = deque.popFirst() { popped.append(element) }
        return popped
    }
}
