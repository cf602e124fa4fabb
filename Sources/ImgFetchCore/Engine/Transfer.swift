import CCurl
import FoundationEssentials
import Glibc

/// One URL's download as the engine sees it: the request, the state that spans its attempts
/// (retries, redirects, cancellation), and the current attempt's response head and body.
///
/// The submitter creates it, `Engine.submit` hands it to the engine thread, and only the engine
/// thread (including libcurl's callbacks, which run inside `curl_multi_socket_action` there)
/// touches its mutable state afterwards; hence `@unchecked Sendable`.
final class Transfer: @unchecked Sendable {
    let id: Int
    let request: TransferRequest
    let onFinish: @Sendable (TransferOutcome) -> Void
    /// A store exchange's answer goes here instead (`StoreExchange`).
    private(set) var onAnswer: (@Sendable (StoreAnswer) -> Void)?
    /// Progress events for the callers; the registry sets `progress.wanted`.
    let progress = ProgressThrottle()

    /// Where the transfer is in its life; the engine moves it on.
    enum Stage: Equatable {
        /// Waiting in the scheduler for its next attempt (its first, or a retry).
        case waiting
        /// Waiting in the scheduler to follow a redirect: the next start is a hop of the same
        /// attempt, not a new one.
        case redirecting
        /// On the multi handle.
        case running
        /// Cancelled; left in the scheduler as a tombstone that `next` drops, its callers answered.
        case cancelled
        /// Its outcome was handed on.
        case finished
    }

    // Engine-thread state across attempts.
    var stage = Stage.waiting
    var attempts = 0
    var sequence = 0
    var currentURL: ParsedURL {
        didSet { hostKey = currentURL.origin }
    }
    /// Per-host bookkeeping key for the scheduler: the current URL's origin, built once per hop
    /// (the scheduler and the header callback ask for it several times per transfer).
    private(set) var hostKey: String
    var redirects = 0
    /// Once a redirect left the original origin, credentials and custom headers stay off for the chain.
    var leftOrigin = false
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The request's header list when it sends conditional headers (the custom headers plus
    /// those); built and freed by the engine thread's `EasyHandleOptions`.
    var conditionalHeaderList: UnsafeMutablePointer<curl_slist>?
    /// Where the header callback notes the protocol of each response's host; set by the engine.
    var protocolLog: HostProtocolLog?
    /// Refuse a 2xx response whose `X-Robots-Tag` opts out for this agent (a lowercase product
    /// token); nil: `--ignore-opt-out`. Set by the engine.
    var optOutAgent: String?

    /// The addresses its connections may go to; set by the engine's `EasyHandleOptions`.
    var addressPolicy = AddressPolicy()
    /// Where the next attempt continues a body that was cut off, with `Range` (`BodyResume`);
    /// nil: it starts from the first byte.
    var resumePoint: BodyResume?

    // Engine-thread state of the current attempt.
    /// Why the policy refused a connection of this attempt (the open-socket callback): the
    /// attempt's error when no other address of the host could be connected to.
    var blockedConnection: String?
    /// Sockets the policy let this attempt open: with one, a failed connect is the host's
    /// failure, not the policy's (a host with a refused IPv6 and an unreachable IPv4 address).
    var openedConnections = 0
    /// This hop's request asked for the rest of the body (`Range`, `If-Range`); set by `EasyHandleOptions`.
    var sentRange = false
    /// Where the 2xx response's body begins within the whole body: the resume point's offset for a
    /// `206` that continues it, else 0.
    var bodyOffset: Int64 = 0
    /// The attempt's `206` did not continue the body where it was cut off: retried from the start.
    var rangeMismatch: DownloadError?
    var response = ResponseHead()
    var body: BodySink
    /// Why a callback aborted the attempt.
    var abortError: DownloadError?
    /// The body reached `maxSize` and the request keeps only that much: the transfer was stopped
    /// on purpose, and what it has is the body.
    var bodyTruncated = false
    /// When the current attempt started, in seconds since the epoch.
    var requestTime: Double = 0

    // Engine-thread state of a store exchange's current attempt.
    /// The response body, up to the exchange's limit.
    var storeBody: [UInt8] = []
    /// A 2xx body went past the limit.
    var storeOverflowed = false
    /// Where the file body's next bytes are read from, and how many are left to send.
    private var uploadOffset = 0
    private var uploadLeft = 0
    /// The exchange's header lines with its signing's, built by the engine's `EasyHandleOptions`.
    var storeHeaderList: UnsafeMutablePointer<curl_slist>?

    init(id: Int, request: TransferRequest, directory: TempFileDirectory?, maxSize: Int64,
         onFinish: @escaping @Sendable (TransferOutcome) -> Void) {
        self.id = id
        self.request = request
        currentURL = request.url
        hostKey = request.url.origin
        body = BodySink(directory: directory, maxSize: maxSize, digests: request.digests)
        self.onFinish = onFinish
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    convenience init(id: Int, url: ParsedURL, directory: TempFileDirectory, maxSize: Int64, priority: RequestPriority = .normal,
                     onFinish: @escaping @Sendable (TransferOutcome) -> Void) {
        self.init(id: id, request: TransferRequest(url: url, priority: priority), directory: directory, maxSize: maxSize,
                  onFinish: onFinish)
    }

    /// A store exchange with the store at `origin`: `onAnswer` gets the answer its judge took,
    /// `onFinish` only a failure.
    convenience init(id: Int, exchange: StoreExchange, origin: ParsedURL, onAnswer: @escaping @Sendable (StoreAnswer) -> Void,
                     onFinish: @escaping @Sendable (TransferOutcome) -> Void) {
        var request = TransferRequest(url: origin)
        request.checksOptOut = false
        request.store = exchange
        self.init(id: id, request: request, directory: nil, maxSize: 0, onFinish: onFinish)
        self.onAnswer = onAnswer
    }

    deinit {
        errorBuffer.deallocate()
        curl_slist_free_all(conditionalHeaderList)
        curl_slist_free_all(storeHeaderList)
    }

    /// Cancelled: the scheduler drops it instead of starting it.
    var isCancelled: Bool { stage == .cancelled }

    var url: ParsedURL { request.url }
    var priority: RequestPriority { request.priority }

    /// The current hop is the URL the request's conditional headers are meant for.
    var isConditional: Bool { !request.conditionalHeaders.isEmpty && currentURL.normalized == request.conditionalURL }

    /// libcurl's error text for the last attempt, if it wrote one.
    var curlErrorText: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    func resetAttempt() {
        storeBody.removeAll(keepingCapacity: true)
        storeOverflowed = false
        if case .file(_, let offset, let length, _) = request.storeBox?.exchange.body {
            uploadOffset = offset
            uploadLeft = length
        }
        // A resumed body continues only at the URL it was cut off at: a hop elsewhere (the `Range`
        // request redirected) starts it over, or its whole body would be appended to the part.
        if let resume = resumePoint, resume.url == currentURL.normalized {
            body.keepForResume()
        } else {
            resumePoint = nil
            body.reset()
        }
        sentRange = false
        bodyOffset = 0
        rangeMismatch = nil
        response = ResponseHead()
        progress.reset()
        abortError = nil
        blockedConnection = nil
        openedConnections = 0
        bodyTruncated = false
        errorBuffer[0] = 0
    }

    /// The write callback: a chunk of the body. Returning less than `chunk.count` aborts the transfer.
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if let box = request.storeBox { return receiveStoreBody(chunk, limit: box.exchange.responseLimit) }
        guard (200..<300).contains(response.status) else {
            // Error and redirect bodies are read and dropped, so the connection can be reused.
            return body.discard(chunk.count) ? chunk.count : 0
        }
        if request.truncatesBody, body.bytes + Int64(chunk.count) > body.maxSize {
            let kept = Int(body.maxSize - body.bytes)
            do {
                try body.write(UnsafeRawBufferPointer(rebasing: chunk.prefix(kept)))
                bodyTruncated = true
            } catch {
                abortError = error
            }
            return 0
        }
        do {
            try body.write(chunk)
        } catch {
            abortError = error
            return 0
        }
        progress.report(received: body.bytes, expected: response.contentLength.map { $0 + bodyOffset })
        return chunk.count
    }

    /// Keeps a store's answer up to `limit`. Past it, a 2xx body (an object read with GET) stops
    /// the attempt; an error page (a proxy's HTML, say) is only cut, so its status still counts.
    private func receiveStoreBody(_ chunk: UnsafeRawBufferPointer, limit: Int) -> Int {
        guard storeBody.count + chunk.count <= limit else {
            if (200..<300).contains(response.status) {
                storeOverflowed = true
                return 0
            }
            storeBody.append(contentsOf: chunk.prefix(max(0, limit - storeBody.count)))
            return chunk.count
        }
        storeBody.append(contentsOf: chunk)
        return chunk.count
    }

    /// The read callback of a store exchange's file body: its next bytes, read with `pread`
    /// (the descriptor's own offset is not used). A failed read aborts the attempt.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard case .file(let descriptor, _, let length, let path) = request.storeBox?.exchange.body else { return 0 }
        let wanted = min(buffer.count, uploadLeft)
        guard wanted > 0 else { return 0 }
        let read = pread(descriptor, buffer.baseAddress, wanted, off_t(uploadOffset))
        guard read > 0 else {
            abortError = DownloadError(.filesystem, "cannot read \(path): \(Errno.describe(read < 0 ? errno : EIO))")
            return Int(CURL_READFUNC_ABORT)
        }
        uploadOffset += read
        uploadLeft -= read
        progress.report(received: Int64(length - uploadLeft), expected: Int64(length))
        return read
    }

    /// Moves the file body's next read to `offset` bytes into the body (libcurl seeks only from
    /// the start). False for a place outside it.
    func seekBody(to offset: Int, origin: Int32) -> Bool {
        guard origin == SEEK_SET, case .file(_, let start, let length, _) = request.storeBox?.exchange.body,
              (0...length).contains(offset) else {
            return false
        }
        uploadOffset = start + offset
        uploadLeft = length - offset
        return true
    }

    /// The answer of a store exchange's attempt, as the callbacks gathered it.
    func storeAnswer() -> StoreAnswer {
        StoreAnswer(status: response.status, body: storeBody, length: response.contentLength.map { Int($0) },
                    etag: value(of: "etag"), region: value(of: "x-amz-bucket-region"))
    }

    /// The final response's last `name` field, unless it is empty.
    func value(of name: String) -> String? {
        guard let value = response.fields.last(where: { $0.name == name })?.value, !value.isEmpty else { return nil }
        return value
    }

    /// The header callback: one line of a response's header block. Returns false to abort the
    /// transfer (with `abortError` set) on a response that must not be trusted.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        switch response.receive(line) {
        case .statusLine:
            if let version = response.httpVersion { protocolLog?.note(host: hostKey, version: version) }
            return true
        case .field:
            return true
        case .end:
            if sentRange, (200..<300).contains(response.status), !continuesBody() { return false }
            guard let agent = optOutAgent, (200..<300).contains(response.status),
                  let value = RobotsTag.optOut(in: response.fields, agent: agent) else { return true }
            // Refused before the first body byte: no file, and the connection is not kept.
            abortError = DownloadError(.optOut, "the site opts out: X-Robots-Tag: \(value.prefix(200)) "
                + "(--ignore-opt-out fetches it anyway)")
            return false
        case .refused(let error):
            abortError = error
            return false
        }
    }

    /// At the end of a 2xx response's header block, after a `Range` request: a `206` that
    /// continues the body where it was cut off is appended to it; any other 2xx (the validator
    /// changed, or the server ignores ranges) replaces it. False for a `206` of another range:
    /// the attempt stops, and the next starts from the first byte.
    private func continuesBody() -> Bool {
        guard let resume = resumePoint else { return true }
        resumePoint = nil
        guard response.status == 206 else {
            body.reset()
            return true
        }
        let range = value(of: "content-range")
        guard let range, resume.isRest(range) else {
            body.reset()
            rangeMismatch = DownloadError(.network, "the server resumed the body with Content-Range: \(range?.prefix(100) ?? "none"), "
                + "not at byte \(resume.offset); fetched again from the start")
            return false
        }
        bodyOffset = resume.offset
        return true
    }

    /// The final response's metadata, as the attempt that just ended got it.
    func responseMetadata() -> ResponseMetadata {
        ResponseMetadata(status: response.status, httpVersion: response.httpVersion, headers: response.fields,
                         requestTime: requestTime, responseTime: Date().timeIntervalSince1970, attempts: attempts,
                         finalURL: currentURL.normalized)
    }
}
