import Glibc

/// Reads a file descriptor line by line as a stream, in fixed-size chunks, so a list of any
/// length is never held whole and a line of any length never grows memory past `maxLineBytes`.
/// A line over `maxLineBytes` is reported as soon as it passes that size, and the rest of it is
/// skipped; one that runs past `maxSkippedBytes` (`/dev/zero`) stops the reading.
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
    /// Past this, a line with no end in sight stops the list: it is no list.
    static let maxSkippedBytes = 64 << 20
    private static let chunkSize = 64 * 1024

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var lineNumber = 0
    private var atEnd = false
    /// One read's worth, allocated once.
    private var chunk = [UInt8](repeating: 0, count: chunkSize)
    /// Bytes of the over-long line being skipped (already reported), or nil.
    private var skipped: Int?

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    mutating func next() -> Line? {
        while true {
            if let newline = newlineIndex() {
                let line = buffer[start..<newline]
                start = newline + 1
                if skipped != nil {
                    // The end of a line reported already.
                    skipped = nil
                    continue
                }
                lineNumber += 1
                if line.count > Self.maxLineBytes { return .tooLong(number: lineNumber) }
                return .text(Self.decode(line), number: lineNumber)
            }
            if let count = skipped {
                skipped = count + buffer.count - start
                buffer.removeAll(keepingCapacity: true)
                start = 0
                if skipped! > Self.maxSkippedBytes {
                    atEnd = true
                    skipped = nil
                    return .readError("line \(lineNumber) runs past \(Self.maxSkippedBytes >> 20) MiB without ending: "
                                      + "this is no list of URLs; stopped reading it", number: lineNumber)
                }
            } else if buffer.count - start > Self.maxLineBytes {
                // Said now, not when (or if) the line ends; only what is needed to find its end is kept.
                skipped = buffer.count - start
                buffer.removeAll(keepingCapacity: true)
                start = 0
                lineNumber += 1
                return .tooLong(number: lineNumber)
            }
            if atEnd {
                guard start < buffer.count, skipped == nil else { return nil }
                let rest = buffer[start...]
                buffer.removeAll()
                start = 0
                lineNumber += 1
                return .text(Self.decode(rest), number: lineNumber)
            }
            if let error = fill() {
                atEnd = true
                return .readError(error, number: lineNumber + 1)
            }
        }
    }

    /// The index of the first line feed from `start`, found with `memchr` (a line of megabytes is searched often).
    private func newlineIndex() -> Int? {
        guard start < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes -> Int? in
            guard let found = memchr(bytes.baseAddress! + start, 0x0A, bytes.count - start) else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(bytes.baseAddress!)
        }
    }

    /// Reads the next chunk; returns an error description on failure.
    private mutating func fill() -> String? {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, Self.chunkSize) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return Errno.describe() }
            if count == 0 {
                atEnd = true
            } else {
                buffer.append(contentsOf: chunk[0..<count])
            }
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
