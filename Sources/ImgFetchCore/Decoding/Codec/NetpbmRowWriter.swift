/// Writes rows as a binary Netpbm file: PPM (P6, RGB; alpha is dropped) or PAM (P7, RGB or RGB_ALPHA).
final class NetpbmRowWriter: RowSink {
    private let writer: FileDescriptorWriter
    private let width: Int
    private let inputChannels: Int
    private let outputChannels: Int
    private let stripped: UnsafeMutablePointer<UInt8>?

    /// Writes the header at once; rows arrive with `channels` (3 or 4) bytes per pixel.
    init(format: PixelFormat, width: Int, height: Int, channels: Int, fd: Int32) throws(DownloadError) {
        writer = FileDescriptorWriter(fd: fd)
        self.width = width
        inputChannels = channels
        outputChannels = format == .ppm ? 3 : channels
        stripped = outputChannels != channels ? .allocate(capacity: width * outputChannels) : nil
        switch format {
        case .pam:
            let tuple = channels == 4 ? "RGB_ALPHA" : "RGB"
            try writer.write("P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(channels)\nMAXVAL 255\nTUPLTYPE \(tuple)\nENDHDR\n")
        default:
            try writer.write("P6\n\(width) \(height)\n255\n")
        }
    }

    deinit {
        stripped?.deallocate()
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        guard let stripped else {
            return try writer.write(row, count: width * inputChannels)
        }
        for x in 0..<width {
            stripped[3 * x] = row[4 * x]
            stripped[3 * x + 1] = row[4 * x + 1]
            stripped[3 * x + 2] = row[4 * x + 2]
        }
        try writer.write(stripped, count: width * 3)
    }

    func finish() throws(DownloadError) {
        try writer.flush()
    }
}
