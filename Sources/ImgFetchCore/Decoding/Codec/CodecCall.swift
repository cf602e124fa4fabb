import CImageCodec

/// Calls into CImageCodec with a message buffer and turns a failing status into a `DownloadError`.
enum CodecCall {
    /// Runs `body` with a stack-allocated message buffer; throws when it returns anything but `IMGCODEC_OK`.
    /// Called once per row, so it allocates nothing on success.
    static func run(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(DownloadError) {
        let failure = withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(IMGCODEC_MESSAGE_SIZE)) { buffer -> DownloadError? in
            buffer[0] = 0
            let status = body(buffer.baseAddress!, buffer.count)
            guard status != Int32(IMGCODEC_OK) else { return nil }
            buffer[buffer.count - 1] = 0
            return error(status: status, message: String(cString: buffer.baseAddress!))
        }
        if let failure { throw failure }
    }

    /// The error for a CImageCodec status: read and write failures are filesystem errors (a full
    /// disk's are `diskFull`), limits are `tooLarge`, data that ends before the image does is `truncated`,
    /// and everything else about the data itself is `notAnImage`.
    static func error(status: Int32, message: String) -> DownloadError {
        switch status {
        case Int32(IMGCODEC_IO): DownloadError(.filesystem, message)
        case Int32(IMGCODEC_NO_SPACE): DownloadError(.diskFull, message)
        case Int32(IMGCODEC_TOO_LARGE): DownloadError(.tooLarge, message)
        case Int32(IMGCODEC_TRUNCATED): DownloadError(.truncated, message)
        case Int32(IMGCODEC_CANCELLED): DownloadError.cancelled
        default: DownloadError(.notAnImage, message.isEmpty ? "invalid image" : message)
        }
    }
}
