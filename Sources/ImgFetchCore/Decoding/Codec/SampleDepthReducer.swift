/// Turns rows of 16-bit samples (native byte order) into rows of 8-bit samples, rounding to the
/// nearest value (v × 255 / 65535), for outputs that need no more (thumbnails).
final class SampleDepthReducer: RowSink {
    private let samples: Int
    private let next: RowSink
    private let output: UnsafeMutablePointer<UInt8>

    /// Rows of `width` pixels of `channels` 16-bit samples come in; 8-bit rows go to `next`.
    init(width: Int, channels: Int, next: RowSink) {
        samples = width * channels
        self.next = next
        output = .allocate(capacity: max(1, samples))
    }

    deinit {
        output.deallocate()
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        UnsafeRawPointer(row).withMemoryRebound(to: UInt16.self, capacity: samples) { wide in
            for i in 0..<samples { output[i] = UInt8((UInt32(wide[i]) * 255 + 32767) / 65535) }
        }
        try next.consume(output)
    }

    func finish() throws(DownloadError) {
        try next.finish()
    }
}
