/// A double-ended queue on a ring buffer: O(1) push and pop at both ends.
package struct Deque<Element> {
    private var storage: [Element?] = []
    private var head = 0
    package private(set) var count = 0

    package init() {}

    package var isEmpty: Bool { count == 0 }
    package var first: Element? { isEmpty ? nil : storage[head] }
    package var last: Element? { isEmpty ? nil : storage[index(count - 1)] }

    package mutating func append(_ element: Element) {
        growIfFull()
        storage[index(count)] = element
        count += 1
    }

    package mutating func prepend(_ element: Element) {
        growIfFull()
        head = (head - 1 + storage.count) % storage.count
        storage[head] = element
        count += 1
    }

    package mutating func popFirst() -> Element? {
        guard let element = first else { return nil }
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    package mutating func popLast() -> Element? {
        guard let element = last else { return nil }
        storage[index(count - 1)] = nil
        count -= 1
        return element
    }

    private func index(_ offset: Int) -> Int { (head + offset) % storage.count }

    private mutating func growIfFull() {
        guard count == storage.count else { return }
        var grown = [Element?](repeating: nil, count: max(16, storage.count * 2))
        for offset in 0..<count { grown[offset] = storage[index(offset)] }
        storage = grown
        head = 0
    }
}
