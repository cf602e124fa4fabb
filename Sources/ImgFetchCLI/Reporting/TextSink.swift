import Glibc
import ImgFetchCore
import Synchronization

/// Where reporters write text: a file descriptor in the program, a buffer in tests.
protocol TextSink: Sendable {
    func write(_ text: String)
}

/// Writes whole strings to a file descriptor (stdout or stderr), retrying short writes.
struct FileDescriptorSink: TextSink {
    let descriptor: Int32
    /// Called when the reader went away (EPIPE), e.g. `imgfetch … | head -3`.
    var onBrokenPipe: (@Sendable () -> Void)?

    init(descriptor: Int32, onBrokenPipe: (@Sendable () -> Void)? = nil) {
        self.descriptor = descriptor
        self.onBrokenPipe = onBrokenPipe
    }

    func write(_ text: String) {
        var text = text
        let failure = text.withUTF8 { FileDescriptorIO.writeAll(descriptor, UnsafeRawBufferPointer($0)) }
        if failure == EPIPE { onBrokenPipe?() }
    }
}

/// Collects everything written, so tests see exactly what a person would.
final class BufferSink: TextSink {
    private let storage = Mutex("")

    var text: String { storage.withLock { $0 } }

    func write(_ text: String) {
        storage.withLock { $0 += text }
    }

    func clear() {
        storage.withLock { $0 = "" }
    }
}
