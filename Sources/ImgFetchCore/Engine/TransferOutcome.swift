/// What the engine hands on when a transfer is over.
enum TransferOutcome: Sendable {
    /// A 2xx response and its complete body.
    case fetched(ReceivedBody, ResponseMetadata)
    /// The request's conditional URL answered 304 Not Modified.
    case notModified(ResponseMetadata)
    case failed(DownloadError, attempts: Int, httpStatus: Int?, httpVersion: HTTPVersion? = nil)
}

/// A complete 2xx body in its temp file, ready for the decode stage.
struct ReceivedBody: Sendable {
    let tempFile: TempFile
    let bytes: Int64
    /// The first bytes, for sniffing the format.
    let head: [UInt8]
    /// The digests of the body the request asked for, hex.
    var digests: [DigestAlgorithm: String] = [:]
    /// SHA-256 of the body, hex; nil unless the request asked for it.
    var sha256: String? { digests[.sha256] }
}
