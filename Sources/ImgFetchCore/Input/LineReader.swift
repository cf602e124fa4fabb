import Glibc

/// Reads a file descriptor line by line as a stream, in fixed-size chunks, so a list of any
/// length is never held whole and a line of any length never grows memory past `maxLineBytes`.
struct LineReader {
    /// One line of input, numbered from 1.
    enum Line: Equatable {
        case text(String, number: Int)
        /// The line was longer than `maxLineBytes`; its content was dropped.
        case tooLong(number: Int)
        /// Reading failed; no lines follow.
        case readError(String, number: Int)
    }

    static let maxLineBytes = 16 * 1024
    private static let chunkSize = 64 * 1024

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var lineNumber = 0
    private var atEnd = false
    private var overlong = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    mutating func next() -> Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                if overlong || line.count > Self.maxLineBytes {
                    overlong = false
                    return .tooLong(number: lineNumber)
                }
                return .text(Self.decode(line), number: lineNumber)
            }
            if buffer.count - start > Self.maxLineBytes {
                // Keep only what is needed to find the end of the over-long line.
                overlong = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            if atEnd {
                guard start < buffer.count || overlong else { return nil }
                let rest = buffer[start...]
                buffer.removeAll()
                start = 0
                lineNumber += 1
                if overlong {
                    overlong = false
                    return .tooLong(number: lineNumber)
                }
                return .text(Self.decode(rest), number: lineNumber)
            }
            if let error = fill() {
                atEnd = true
                return .readError(error, number: lineNumber + 1)
            }
        }
    }

    /// Reads the next chunk; returns an error description on failure.
    private mutating func fill() -> String? {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        let oldCount = buffer.count
        buffer.reserveCapacity(oldCount + Self.chunkSize)
        buffer.append(contentsOf: repeatElement(0, count: Self.chunkSize))
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + oldCount, Self.chunkSize)
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                buffer.removeSubrange(oldCount...)
                return Errno.describe()
            }
            buffer.removeSubrange((oldCount + count)...)
            if count == 0 { atEnd = true }
            return nil
        }
    }

    /// UTF-8 text without a trailing CR (CRLF lists) or a leading byte-order mark.
    private static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var slice = bytes
        if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
        if slice.starts(with: [0xEF, 0xBB, 0xBF]) { slice = slice.dropFirst(3) }
        return String(decoding: slice, as: UTF8.self)
    }
}
