/// Writes rows as a binary Netpbm file. PAM (P7) keeps the rows' channels and depth (TUPLTYPE
/// GRAYSCALE, GRAYSCALE_ALPHA, RGB or RGB_ALPHA; MAXVAL 255 or 65535). PPM (P6) is RGB: gray is
/// repeated into the three channels and alpha is dropped; MAXVAL is 65535 for 16-bit rows. Netpbm
/// stores 16-bit samples big-endian.
final class NetpbmRowWriter: RowSink {
    private let writer: FileDescriptorWriter
    private let width: Int
    private let input: PixelLayout
    private let output: PixelLayout
    /// The row in output form, when it differs from the input (channels changed, or 16-bit samples to swap).
    private let converted: UnsafeMutablePointer<UInt8>?
    /// For each output channel, the input channel it comes from: gray fills R, G and B.
    private let sourceChannels: [Int]

    /// Writes the header at once; rows arrive in `layout`.
    init(format: PixelFormat, width: Int, height: Int, layout: PixelLayout, fd: Int32) throws(DownloadError) {
        writer = FileDescriptorWriter(fd: fd)
        self.width = width
        input = layout
        output = format == .ppm ? PixelLayout(channels: 3, bitDepth: layout.bitDepth) : layout
        let bigEndian = 1.bigEndian == 1
        sourceChannels = output.channels == input.channels ? Array(0..<input.channels)
            : input.channels <= 2 ? [0, 0, 0] : [0, 1, 2]
        converted = output != input || (layout.bitDepth == 16 && !bigEndian) ? .allocate(capacity: max(1, output.rowBytes(width: width))) : nil
        switch format {
        case .pam:
            let tuple = ["GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA"][layout.channels - 1]
            try writer.write("P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(layout.channels)\nMAXVAL \(layout.maxSample)\n"
                + "TUPLTYPE \(tuple)\nENDHDR\n")
        default:
            try writer.write("P6\n\(width) \(height)\n\(layout.maxSample)\n")
        }
    }

    deinit {
        converted?.deallocate()
    }

    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError) {
        guard let converted else {
            return try writer.write(row, count: output.rowBytes(width: width))
        }
        let size = input.bytesPerSample
        var o = converted
        for x in 0..<width {
            let pixel = row + x * input.pixelBytes
            for c in sourceChannels {
                let sample = pixel + c * size
                if size == 2 {
                    let value = UnsafeRawPointer(sample).loadUnaligned(as: UInt16.self)
                    o[0] = UInt8(truncatingIfNeeded: value >> 8)
                    o[1] = UInt8(truncatingIfNeeded: value)
                } else {
                    o[0] = sample[0]
                }
                o += size
            }
        }
        try writer.write(converted, count: output.rowBytes(width: width))
    }

    func finish() throws(DownloadError) {
        try writer.flush()
    }
}
