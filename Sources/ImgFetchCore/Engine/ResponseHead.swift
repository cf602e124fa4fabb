/// The header block of an attempt's latest response (a redirect chain sends several), taken in
/// line by line as libcurl's header callback hands them over. Engine thread only.
struct ResponseHead {
    var status = 0
    /// The protocol of the status line.
    var httpVersion: HTTPVersion?
    var retryAfter: String?
    var contentLength: Int64?
    /// The response is chunked (`Transfer-Encoding: chunked`).
    var isChunked = false
    /// The header block ended; libcurl errors before that are about the headers.
    var isComplete = false
    /// Every header field, in order.
    var fields: [HeaderField] = []

    var statusIfAny: Int? { status == 0 ? nil : status }

    /// What one header line was.
    enum Line {
        /// A status line: a new response begins.
        case statusLine
        case field
        case end
        /// A line that makes the response untrustworthy: the transfer must be aborted.
        case refused(DownloadError)
    }

    /// Takes one header line. Invalid or conflicting Content-Length values are refused: RFC 9112
    /// §6.3 makes them an unrecoverable error, and libcurl lets them through (it uses the last
    /// header, or the first number of a list).
    mutating func receive(_ line: UnsafeRawBufferPointer) -> Line {
        guard let first = line.first else { return .field }
        if first == UInt8(ascii: "H"), line.starts(with: "HTTP/".utf8) {
            let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2)
            retryAfter = nil
            contentLength = nil
            isChunked = false
            isComplete = false
            fields.removeAll(keepingCapacity: true)
            status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
            httpVersion = HTTPVersion(statusLineProtocol: parts[0])
            return .statusLine
        }
        if first == UInt8(ascii: "\r") || first == UInt8(ascii: "\n") {
            isComplete = true
            return .end
        }
        guard let field = Self.field(line) else { return .field }
        switch field.name {
        case "retry-after": retryAfter = field.value
        case "transfer-encoding": isChunked = field.value.lowercased().contains("chunked")
        case "content-length":
            if let error = receiveContentLength(field.value) { return .refused(error) }
        default: break
        }
        fields.append(field)
        return .field
    }

    /// Accepts one Content-Length header (a comma-separated list is allowed when every value is the same).
    private mutating func receiveContentLength(_ value: String) -> DownloadError? {
        var lengths: [Int64] = contentLength.map { [$0] } ?? []
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = item.trimmingWhitespace
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let length = Int64(text) else {
                return Self.invalidContentLength
            }
            lengths.append(length)
        }
        let distinct = lengths.reduce(into: [Int64]()) { if !$0.contains($1) { $0.append($1) } }
        guard distinct.count == 1 else {
            let values = distinct.map(String.init).joined(separator: ", ")
            return DownloadError(.network, "invalid HTTP response: conflicting Content-Length headers (\(values)); refused")
        }
        contentLength = distinct[0]
        return nil
    }

    /// A Content-Length that is not a byte count, whether libcurl or `receive` found it.
    static let invalidContentLength = DownloadError(.network, "invalid HTTP response: Content-Length header is not a byte count")

    /// A header line's lowercase name and trimmed value; nil for a line without a colon.
    private static func field(_ line: UnsafeRawBufferPointer) -> HeaderField? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let nameBytes = line[..<colon]
        let name = String(unsafeUninitializedCapacity: nameBytes.count) { buffer in
            _ = buffer.initialize(from: nameBytes.lazy.map(lowercase))
            return nameBytes.count
        }
        let value = String(decoding: trimmingHTTPWhitespace(line[(colon + 1)...]), as: UTF8.self)
        return HeaderField(name: name, value: value)
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
