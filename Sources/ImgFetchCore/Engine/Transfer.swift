import CCurl
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// One URL's download as the engine sees it: the request plus the state of its current attempt.
///
/// The submitter creates it, `Engine.submit` hands it to the engine thread, and only the engine
/// thread (including libcurl's callbacks, which run inside `curl_multi_socket_action` there) touches its
/// mutable state afterwards; hence `@unchecked Sendable`.
final class Transfer: @unchecked Sendable {
    let id: Int
    let url: ParsedURL
    /// Where the body's temp file is made (the output directory).
    let directory: TempFileDirectory
    let onFinish: @Sendable (TransferOutcome) -> Void

    // Engine-thread state across attempts.
    var attempts = 0
    var sequence = 0
    let priority: RequestPriority
    var isCancelled = false
    var isFinished = false
    var currentURL: ParsedURL {
        didSet { hostKey = currentURL.origin }
    }
    /// Per-host bookkeeping key for the scheduler: the current URL's origin, built once per hop
    /// (the scheduler and the header callback ask for it several times per transfer).
    private(set) var hostKey: String
    var redirects = 0
    /// Once a redirect left the original origin, credentials and custom headers stay off for the chain.
    var leftOrigin = false
    var followingRedirect = false
    /// The body's temp file, from the first body byte of a 2xx response on.
    var tempFile: TempFile?
    let errorBuffer: UnsafeMutablePointer<CChar>
    let maxSize: Int64
    /// `If-None-Match` / `If-Modified-Since` lines when the transfer revalidates a cache entry…
    let validators: [String]
    /// …sent only to this normalized URL: the one the cached response came from (after its redirects).
    let validatorTarget: String?
    /// The request's header list when it has validators (the custom headers plus those); built
    /// and freed by the engine thread's `EasyHandleOptions`.
    var conditionalHeaderList: UnsafeMutablePointer<curl_slist>?
    /// SHA-256 of the body as it arrives, for the cache index; nil when nothing is indexed.
    let bodyHasher: SHA256Hasher?
    /// Progress fan-out; called on the engine thread at most once per `progressInterval`, and once
    /// at the end, while `progressWanted`.
    var onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?
    /// Whether any caller has a progress handler, set by the registry as callers subscribe. Without
    /// one, the fan-out (a read of the registry) is skipped: it cost two registry reads per body,
    /// and their contention with the list reader's and the decode stage's barriers a thread
    /// hand-off each (2000 small images: 0.55 -> 0.47 s, context switches 3700 -> 2700).
    let progressWanted = Atomic<Bool>(false)
    var progressInterval: UInt64 = 100_000_000
    private var lastProgress: UInt64?
    /// Where the header callback notes the protocol of each response's host; set by the engine.
    var protocolLog: HostProtocolLog?
    /// The run's budget for bodies held in memory; set by the engine.
    var heldBodyBudget: HeldBodyBudget?

    // Engine-thread state of the current attempt.
    var status = 0
    /// The protocol of the latest response's status line.
    var httpVersion: HTTPVersion?
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
    /// The latest response's caching headers.
    var cacheHeaders = ResponseCacheHeaders()
    /// When the current attempt started, in seconds since the epoch (RFC 9111's request_time).
    var requestTime: Double = 0

    init(id: Int, url: ParsedURL, directory: TempFileDirectory, maxSize: Int64, priority: RequestPriority = .normal,
         validators: [String] = [], validatorTarget: String? = nil, hashesBody: Bool = false, onFinish: @escaping @Sendable (TransferOutcome) -> Void) {
        self.id = id
        self.priority = priority
        self.url = url
        self.currentURL = url
        hostKey = url.origin
        self.directory = directory
        self.maxSize = maxSize
        self.validators = validators
        self.validatorTarget = validatorTarget
        bodyHasher = hashesBody ? SHA256Hasher() : nil
        self.onFinish = onFinish
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        errorBuffer.deallocate()
        curl_slist_free_all(conditionalHeaderList)
    }

    /// The current request asks the server to confirm the cached body (a 304 is the expected
    /// answer): it goes to the URL the cached response came from. Other hops of a redirect chain
    /// get no validators, and a 304 from one of them confirms nothing.
    var isConditional: Bool { !validators.isEmpty && currentURL.normalized == validatorTarget }

    var statusIfAny: Int? { status == 0 ? nil : status }


    /// libcurl's error text for the last attempt, if it wrote one.
    var curlErrorText: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    func resetAttempt() {
        // A first attempt's file is already empty: no truncate (two syscalls per URL) needed.
        if bytes > 0 {
            tempFile?.truncate()
            bodyHasher?.reset()
        }
        status = 0
        httpVersion = nil
        retryAfter = nil
        contentLength = nil
        lastProgress = nil
        bytes = 0
        head.removeAll(keepingCapacity: true)
        discardedBytes = 0
        abortError = nil
        isChunked = false
        headersComplete = false
        cacheHeaders = ResponseCacheHeaders()
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
        // Created at the first body byte, not at the start: a 304, an error status or a failed
        // connection never costs a file (on ext4, creating and removing one is the dearest step).
        let tempFile: TempFile
        do {
            tempFile = try openTempFile()
        } catch {
            abortError = error
            return 0
        }
        if let code = tempFile.write(chunk) {
            abortError = DownloadError(.filesystem, "cannot write temp file \(tempFile.displayPath): \(Errno.describe(code))")
            return 0
        }
        bodyHasher?.update(chunk)
        if head.count < ImageSniffer.headLength {
            head.append(contentsOf: chunk.prefix(ImageSniffer.headLength - head.count))
        }
        bytes += Int64(chunk.count)
        if let onProgress, progressWanted.load(ordering: .relaxed) {
            let now = DispatchTime.now().uptimeNanoseconds
            if lastProgress.map({ now - $0 >= progressInterval }) ?? true {
                lastProgress = now
                onProgress(bytes, contentLength)
            }
        }
        return chunk.count
    }

    /// The body's temp file, created on first use.
    func openTempFile() throws(DownloadError) -> TempFile {
        if let tempFile { return tempFile }
        let created = try directory.create(budget: heldBodyBudget)
        tempFile = created
        return created
    }

    /// The last progress event of a complete body, which throttling never drops.
    func reportFinalProgress() {
        guard progressWanted.load(ordering: .relaxed) else { return }
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
            httpVersion = HTTPVersion(statusLineProtocol: fields[0])
            if let httpVersion { protocolLog?.note(host: hostKey, version: httpVersion) }
            retryAfter = nil
            contentLength = nil
            isChunked = false
            headersComplete = false
            cacheHeaders = ResponseCacheHeaders()
            return true
        }
        if first == UInt8(ascii: "\r") || first == UInt8(ascii: "\n") {
            headersComplete = true
            return true
        }
        guard let (name, value) = Self.field(line) else { return true }
        switch name {
        case "retry-after": retryAfter = value
        case "transfer-encoding": isChunked = value.lowercased().contains("chunked")
        case "content-length": return receiveContentLength(value)
        default: _ = cacheHeaders.receive(name: name, value: value)
        }
        return true
    }

    /// Accepts one Content-Length header (a comma-separated list is allowed when every value is the same).
    private func receiveContentLength(_ value: String) -> Bool {
        var lengths: [Int64] = contentLength.map { [$0] } ?? []
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = item.trimmingWhitespace
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

    /// A header line's lowercase name and trimmed value; nil for a line without a colon.
    private static func field(_ line: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: line[..<colon].map(lowercase), as: UTF8.self)
        let value = String(decoding: trimmingHTTPWhitespace(line[(colon + 1)...]), as: UTF8.self)
        return (name, value)
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

/// What the engine hands on when a transfer is over.
enum TransferOutcome: Sendable {
    case fetched(FetchedBody)
    /// A conditional request was answered 304 Not Modified: the cached body is current.
    case notModified(CacheRevalidation)
    case failed(DownloadError, attempts: Int, httpStatus: Int?, httpVersion: HTTPVersion? = nil)
}

/// A complete 2xx body in its temp file, ready for the decode stage.
struct FetchedBody: Sendable {
    let tempFile: TempFile
    let bytes: Int64
    let head: [UInt8]
    let httpStatus: Int
    let attempts: Int
    /// The response's caching headers and when it was requested and received (seconds since the epoch).
    var cacheHeaders = ResponseCacheHeaders()
    var requestTime: Double = 0
    var responseTime: Double = 0
    /// SHA-256 of the body, hex; nil when the transfer did not hash it.
    var contentHash: String?
    /// The normalized URL the body came from, after redirects.
    var finalURL: String?
    /// The protocol the body came over.
    var httpVersion: HTTPVersion?
}

/// A 304 to a conditional request: the headers that update the cache entry, and the timing.
struct CacheRevalidation: Sendable {
    let cacheHeaders: ResponseCacheHeaders
    let requestTime: Double
    let responseTime: Double
    let attempts: Int
    var httpVersion: HTTPVersion?
}
