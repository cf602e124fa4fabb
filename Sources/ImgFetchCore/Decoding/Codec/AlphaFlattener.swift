/// Composites 8-bit rows with alpha (gray+alpha or RGBA) onto a background color and drops the
/// alpha channel, for outputs that have none (JPEG): gray+alpha becomes gray (over the color's
/// luma), RGBA becomes RGB.
final class AlphaFlattener: RowSink {
    private let width: Int
    private let colorChannels: Int
    /// The background's samples, one per color channel.
    private let background: [UInt32]
    private let next: RowSink
    private let output: UnsafeMutablePointer<UInt8>

    /// Rows of `width` pixels of `channels` (2 or 4) 8-bit samples come in; `channels - 1` go to `next`.
    init(width: Int, channels: Int, background: Resize.Color = .white, next: RowSink) {
        precondition(channels == 2 || channels == 4, "only gray+alpha and RGBA have alpha")
        self.width = width
        colorChannels = channels - 1
        self.background = channels == 2 ? [UInt32(background.luma)]
            : [UInt32(background.red), UInt32(background.green), UInt32(background.blue)]
        self.next = next
        output = .allocate(capacity: max(1, width * colorChannels))
    }

    deinit {
        output.deallocate()
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        let stride = colorChannels + 1
        for x in 0..<width {
            let pixel = row + x * stride
            let alpha = UInt32(pixel[colorChannels])
            for channel in 0..<colorChannels {
                // Over the background: (c × a + b × (255 − a)) / 255, rounded.
                output[x * colorChannels + channel] =
                    UInt8((UInt32(pixel[channel]) * alpha + background[channel] * (255 - alpha) + 127) / 255)
            }
        }
        try next.consume(output)
    }

    func finish() throws(DownloadError) {
        try next.finish()
    }
}
