import Glibc

/// Buffers small writes into large sequential `write(2)` calls on a descriptor it does not own.
final class FileDescriptorWriter {
    private let fd: Int32
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var used = 0

    init(fd: Int32, capacity: Int = 256 * 1024) {
        self.fd = fd
        self.capacity = capacity
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
    }

    func write(_ bytes: UnsafeRawPointer, count: Int) throws(DownloadError) {
        var bytes = bytes
        var remaining = count
        while remaining > 0 {
            if used == capacity { try flush() }
            let chunk = min(remaining, capacity - used)
            (buffer + used).update(from: bytes.assumingMemoryBound(to: UInt8.self), count: chunk)
            used += chunk
            bytes += chunk
            remaining -= chunk
        }
    }

    func write(_ text: String) throws(DownloadError) {
        for byte in text.utf8 {
            if used == capacity { try flush() }
            buffer[used] = byte
            used += 1
        }
    }

    /// Writes out everything buffered.
    func flush() throws(DownloadError) {
        if let code = FileDescriptorIO.writeAll(fd, UnsafeRawBufferPointer(start: buffer, count: used)) {
            throw DownloadError.writing("output", code)
        }
        used = 0
    }
}
