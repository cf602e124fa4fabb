import Glibc
import Synchronization

/// Where reporters write text: a file descriptor in the program, a buffer in tests.
protocol OutputSink: Sendable {
    func write(_ text: String)
}

/// Writes whole strings to a file descriptor (stdout or stderr), retrying short writes.
struct FileDescriptorSink: OutputSink {
    let descriptor: Int32
    /// Called when the reader went away (EPIPE), e.g. `imgfetch … | head -3`.
    var onBrokenPipe: (@Sendable () -> Void)?

    init(descriptor: Int32, onBrokenPipe: (@Sendable () -> Void)? = nil) {
        self.descriptor = descriptor
        self.onBrokenPipe = onBrokenPipe
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { onBrokenPipe?() }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }
}

/// Collects everything written, so tests see exactly what a person would.
final class BufferSink: OutputSink {
    private let storage = Mutex("")

    var text: String { storage.withLock { $0 } }

    func write(_ text: String) {
        storage.withLock { $0 += text }
    }

    func clear() {
        storage.withLock { $0 = "" }
    }
}
