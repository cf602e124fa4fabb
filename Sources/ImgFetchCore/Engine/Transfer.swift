import CCurl
import Foundation

/// One URL's download as the engine sees it: the request plus the state of its current attempt.
///
/// The submitter creates it, `Engine.submit` hands it to the engine thread, and only the engine
/// thread (including libcurl's callbacks, which run inside `curl_multi_perform` there) touches its
/// mutable state afterwards; hence `@unchecked Sendable`.
final class Transfer: @unchecked Sendable {
    let id: Int
    let url: ParsedURL
    let directory: String
    let onFinish: @Sendable (TransferOutcome) -> Void

    // Engine-thread state across attempts.
    var attempts = 0
    var sequence = 0
    let priority: RequestPriority
    var isCancelled = false
    var isFinished = false
    var currentURL: ParsedURL
    var redirects = 0
    /// Once a redirect left the original origin, credentials and custom headers stay off for the chain.
    var leftOrigin = false
    var followingRedirect = false
    var tempFile: TempFile?
    let errorBuffer: UnsafeMutablePointer<CChar>
    let maxSize: Int64
    /// Progress fan-out; called on the engine thread at most once per `progressInterval`, and once at the end.
    var onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?
    var progressInterval: UInt64 = 100_000_000
    private var lastProgress: UInt64?

    // Engine-thread state of the current attempt.
    var status = 0
    var retryAfter: String?
    var contentLength: Int64?
    var bytes: Int64 = 0
    var head: [UInt8] = []
    var discardedBytes = 0
    var abortError: DownloadError?
    /// The latest response is chunked (`Transfer-Encoding: chunked`).
    var isChunked = false
    /// The latest response's header block ended; libcurl errors before that are about the headers.
    var headersComplete = false

    init(id: Int, url: ParsedURL, directory: String, maxSize: Int64, priority: RequestPriority = .normal,
         onFinish: @escaping @Sendable (TransferOutcome) -> Void) {
        self.id = id
        self.priority = priority
        self.url = url
        self.currentURL = url
        self.directory = directory
        self.maxSize = maxSize
        self.onFinish = onFinish
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        errorBuffer.deallocate()
    }

    var statusIfAny: Int? { status == 0 ? nil : status }

    /// Per-host bookkeeping key for the scheduler.
    var hostKey: String { currentURL.origin }

    /// libcurl's error text for the last attempt, if it wrote one.
    var curlErrorText: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    func resetAttempt() {
        // A first attempt's file is already empty: no truncate (two syscalls per URL) needed.
        if bytes > 0 { tempFile?.truncate() }
        status = 0
        retryAfter = nil
        contentLength = nil
        lastProgress = nil
        bytes = 0
        head.removeAll(keepingCapacity: true)
        discardedBytes = 0
        abortError = nil
        isChunked = false
        headersComplete = false
        errorBuffer[0] = 0
    }

    /// Largest error or redirect body read (and thrown away) before the connection is dropped instead.
    static let maxDiscardedBytes = 1 << 20

    /// The write callback: append a body chunk to the temp file. Returning less than `chunk.count` aborts the transfer.
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        guard (200..<300).contains(status) else {
            // Error and redirect bodies are read and dropped, so the connection can be reused.
            discardedBytes += chunk.count
            return discardedBytes > Self.maxDiscardedBytes ? 0 : chunk.count
        }
        guard bytes + Int64(chunk.count) <= maxSize else {
            abortError = DownloadError(.tooLarge, "body exceeds --max-size (\(maxSize) bytes)")
            return 0
        }
        guard let tempFile else { return 0 }
        if let code = tempFile.write(chunk) {
            abortError = DownloadError(.filesystem, "cannot write temp file \(tempFile.path): \(Errno.describe(code))")
            return 0
        }
        if head.count < ImageSniffer.headLength {
            head.append(contentsOf: chunk.prefix(ImageSniffer.headLength - head.count))
        }
        bytes += Int64(chunk.count)
        if let onProgress {
            let now = DispatchTime.now().uptimeNanoseconds
            if lastProgress.map({ now - $0 >= progressInterval }) ?? true {
                lastProgress = now
                onProgress(bytes, contentLength)
            }
        }
        return chunk.count
    }

    /// The last progress event of a complete body, which throttling never drops.
    func reportFinalProgress() {
        onProgress?(bytes, bytes)
    }

    /// The header callback: track the status of the latest response (redirects send several),
    /// `Retry-After`, the framing, and the end of the header block. Returns false to abort the
    /// transfer (with `abortError` set) on a response that must not be trusted: invalid or
    /// conflicting Content-Length values, which RFC 9112 §6.3 makes an unrecoverable error and
    /// libcurl lets through (it uses the last header, or the first number of a list).
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let first = line.first else { return true }
        if first == UInt8(ascii: "H"), line.starts(with: "HTTP/".utf8) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 2)
            status = fields.count > 1 ? Int(String(decoding: fields[1], as: UTF8.self)) ?? 0 : 0
            retryAfter = nil
            contentLength = nil
            isChunked = false
            headersComplete = false
            return true
        }
        if first == UInt8(ascii: "\r") || first == UInt8(ascii: "\n") {
            headersComplete = true
        } else if let value = Self.value(of: "retry-after:", in: line) {
            retryAfter = value
        } else if let value = Self.value(of: "transfer-encoding:", in: line) {
            isChunked = value.lowercased().contains("chunked")
        } else if let value = Self.value(of: "content-length:", in: line) {
            return receiveContentLength(value)
        }
        return true
    }

    /// Accepts one Content-Length header (a comma-separated list is allowed when every value is the same).
    private func receiveContentLength(_ value: String) -> Bool {
        var lengths: [Int64] = contentLength.map { [$0] } ?? []
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = item.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let length = Int64(text) else {
                abortError = Self.invalidContentLength
                return false
            }
            lengths.append(length)
        }
        let distinct = lengths.reduce(into: [Int64]()) { if !$0.contains($1) { $0.append($1) } }
        guard distinct.count == 1 else {
            let values = distinct.map(String.init).joined(separator: ", ")
            abortError = DownloadError(.network, "invalid HTTP response: conflicting Content-Length headers (\(values)); refused")
            return false
        }
        contentLength = distinct[0]
        return true
    }

    /// A Content-Length that is not a byte count, whether libcurl or `receiveHeader` found it.
    static let invalidContentLength = DownloadError(.network, "invalid HTTP response: Content-Length header is not a byte count")

    /// The trimmed value of a header line whose lowercase name (with colon) is `prefix`.
    private static func value(of prefix: String, in line: UnsafeRawBufferPointer) -> String? {
        guard line.count > prefix.utf8.count, zip(line, prefix.utf8).allSatisfy({ lowercase($0) == $1 }) else { return nil }
        return String(decoding: line.dropFirst(prefix.utf8.count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

/// What the engine hands on when a transfer is over.
enum TransferOutcome: Sendable {
    case fetched(FetchedBody)
    case failed(DownloadError, attempts: Int, httpStatus: Int?)
}

/// A complete 2xx body in its temp file, ready for the decode stage.
struct FetchedBody: Sendable {
    let tempFile: TempFile
    let bytes: Int64
    let head: [UInt8]
    let httpStatus: Int
    let attempts: Int
}
