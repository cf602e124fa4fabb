import CCurl
import FoundationEssentials
import Glibc
import Synchronization

/// Requests to an S3-compatible object store, one at a time, on one libcurl easy handle that is
/// kept between requests (so is its connection). libcurl signs each request with AWS Signature
/// Version 4 (`CURLOPT_AWS_SIGV4`); the payload's SHA-256 goes in `x-amz-content-sha256`, which
/// libcurl signs as the payload hash and the store checks against the bytes it received.
///
/// A failed request is retried as a download is (`RetryPolicy`: timeouts, resets, 408, 429 and
/// 5xx, with backoff); a refusal (403, 404 of the bucket, …) is not. Every failure is a
/// `storage` error that names the object and says what the store answered.
///
/// Used only by the thread that created it: the handle is that thread's.
public final class S3Client {
    public struct Settings: Sendable {
        public var retry: RetryPolicy
        public var connectTimeout: Double
        /// Abort a request under 1 KB/s for this many seconds.
        public var timeout: Double
        public var userAgent: String

        public init(retry: RetryPolicy, connectTimeout: Double = 10, timeout: Double = 15, userAgent: String) {
            self.retry = retry
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.userAgent = userAgent
        }
    }

    /// Set from any thread to end a request in progress and every retry (`cancelled`).
    public final class Stop: Sendable {
        private let flag = Atomic<Bool>(false)
        public init() {}
        public func request() { flag.store(true, ordering: .relaxed) }
        public var requested: Bool { flag.load(ordering: .relaxed) }
    }

    /// S3's limit on one PUT; larger objects need a multipart upload, which this client does not make.
    static let largestPut = 5 << 30
    /// Most bytes of an error response kept for its message.
    static let errorBodyLimit = 64 << 10

    private let access: S3Access
    private let settings: Settings
    private let stop: Stop
    private let handle: OpaquePointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    public init(access: S3Access, settings: Settings, stop: Stop = Stop()) {
        self.access = access
        self.settings = settings
        self.stop = stop
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Uploads the file at `path` as object `key`, with `contentType`. Returns once the store
    /// answered 200.
    public func put(file path: String, bucket: String, key: String, contentType: String) throws(DownloadError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
        let digest: String
        var info = stat()
        do {
            defer { close(descriptor) }
            guard fstat(descriptor, &info) == 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
            digest = try SHA256.hexDigest(ofFile: descriptor, path: path)
        }
        let size = Int(info.st_size)
        guard size <= Self.largestPut else {
            throw DownloadError(.storage, "s3://\(bucket)/\(key) is \(size) bytes, more than S3 takes in one PUT (5 GiB)")
        }
        // libcurl's `Expect: 100-continue` stays: a refusal then costs no body. It cannot be
        // turned off with an empty `Expect:` header, which libcurl 7.88 signs but does not send.
        _ = try request(.put(path: path, size: size), bucket: bucket, key: key, payloadHash: digest,
                        headers: ["Content-Type: \(contentType)"])
    }

    /// The bytes of object `key` (at most `limit`; a larger object is an error), or nil when
    /// there is no such object.
    public func get(bucket: String, key: String, limit: Int) throws(DownloadError) -> [UInt8]? {
        let response = try request(.get(limit: limit), bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
        return response.status == 404 ? nil : response.body
    }

    /// The size of object `key`, or nil when there is no such object.
    public func size(bucket: String, key: String) throws(DownloadError) -> Int? {
        let response = try request(.head, bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
        return response.status == 404 ? nil : response.length
    }

    /// Deletes object `key`; no such object is no error.
    public func delete(bucket: String, key: String) throws(DownloadError) {
        _ = try request(.delete, bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
    }

    /// SHA-256 of no bytes: the payload hash of GET, HEAD and DELETE.
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private enum Method {
        case put(path: String, size: Int)
        case get(limit: Int)
        case head
        case delete

        var name: String {
            switch self {
            case .put: "PUT"
            case .get: "GET"
            case .head: "HEAD"
            case .delete: "DELETE"
            }
        }
    }

    private struct Response {
        var status: Int
        var body: [UInt8]
        var length: Int?
    }

    /// The request, with its retries: a 2xx answer (or a 404 of GET, HEAD and DELETE, which say "none").
    private func request(_ method: Method, bucket: String, key: String, payloadHash: String,
                         headers: [String]) throws(DownloadError) -> Response {
        let url = access.objectURL(bucket: bucket, key: key)
        let name = "s3://\(bucket)/\(key)"
        var failed = 0
        while true {
            if stop.requested { throw DownloadError(.cancelled, "cancelled before \(method.name) \(name)") }
            let (response, failure, transient) = try attempt(method, url: url, name: name, payloadHash: payloadHash, headers: headers)
            guard let failure else { return response }
            failed += 1
            guard transient, !stop.requested,
                  let wait = settings.retry.delay(afterFailedAttempts: failed, retryAfter: nil,
                                                  now: Date().timeIntervalSince1970, random: Double.random(in: 0..<1)) else {
                let tries = failed > 1 ? " (after \(failed) attempts)" : ""
                throw DownloadError(failure.kind, failure.message + tries)
            }
            pause(wait)
        }
    }

    /// Sleeps `seconds`, or less when a stop is requested.
    private func pause(_ seconds: Double) {
        var left = seconds
        while !stop.requested, left > 0 {
            usleep(useconds_t(min(left, 0.1) * 1_000_000))
            left -= 0.1
        }
    }

    /// One attempt: its response, or its failure and whether a retry may help.
    private func attempt(_ method: Method, url: String, name: String, payloadHash: String,
                         headers: [String]) throws(DownloadError) -> (Response, DownloadError?, Bool) {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        let body = ResponseBody(limit: { if case .get(let limit) = method { limit } else { Self.errorBodyLimit } }())
        let stopBox = Unmanaged.passRetained(stop)
        let bodyBox = Unmanaged.passRetained(body)
        defer {
            stopBox.release()
            bodyBox.release()
        }
        var list: UnsafeMutablePointer<curl_slist>?
        var all = headers + ["x-amz-content-sha256: \(payloadHash)"]
        if let token = access.sessionToken { all.append("x-amz-security-token: \(token)") }
        for header in all { list = curl_slist_append(list, header) }
        defer { curl_slist_free_all(list) }

        CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        CCurl_easy_setopt_string(handle, CURLOPT_URL, url)
        CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        CCurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        CCurl_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(access.region):s3")
        CCurl_easy_setopt_string(handle, CURLOPT_USERNAME, access.accessKey)
        CCurl_easy_setopt_string(handle, CURLOPT_PASSWORD, access.secretKey)
        CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, settings.userAgent)
        CCurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout * 1000))
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1024)
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(settings.timeout.rounded(.up))))
        if let bundle = access.caBundle { CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, bundle) }
        CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, responseBodyCallback)
        CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, bodyBox.toOpaque())
        CCurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
        CCurl_easy_setopt_xferinfo_callback(handle, stopCallback)
        CCurl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, stopBox.toOpaque())

        var file: UnsafeMutablePointer<FILE>?
        defer { if let file { fclose(file) } }
        switch method {
        case .put(let path, let size):
            file = fopen(path, "rb")
            guard let file else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
            CCurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            CCurl_easy_setopt_pointer(handle, CURLOPT_READDATA, UnsafeMutableRawPointer(file))
            CCurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
        case .get:
            break
        case .head:
            CCurl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case .delete:
            CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "DELETE")
        }

        let code = curl_easy_perform(handle)
        var status = 0
        CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var length: curl_off_t = -1
        CCurl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        let response = Response(status: status, body: body.bytes, length: length >= 0 ? Int(length) : nil)
        if code == CURLE_ABORTED_BY_CALLBACK && stop.requested {
            throw DownloadError(.cancelled, "cancelled during \(method.name) \(name)")
        }
        if code == CURLE_WRITE_ERROR && body.overflowed {
            return (response, DownloadError(.storage, "\(method.name) \(name): the object is larger than \(body.limit) bytes"), false)
        }
        guard code == CURLE_OK else {
            let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
            let where_ = access.endpoint ?? url
            return (response, DownloadError(.storage, "\(method.name) \(name) failed: \(detail) (\(where_))"),
                    RetryPolicy.isTransient(curlCode: code))
        }
        if (200..<300).contains(status) { return (response, nil, false) }
        if status == 404, case .put = method {} else if status == 404 { return (response, nil, false) }
        let said = Self.errorText(body.bytes)
        return (response, DownloadError(.storage, "\(method.name) \(name): HTTP \(status)\(said)\(Self.hint(status))"),
                RetryPolicy.isTransient(status: status))
    }

    /// ` AccessDenied: Access Denied` from S3's XML error body, or nothing.
    static func errorText(_ body: [UInt8]) -> String {
        func element(_ name: String) -> String? {
            let open = Array("<\(name)>".utf8), close = Array("</\(name)>".utf8)
            guard let start = find(open, in: body, from: 0), let end = find(close, in: body, from: start + open.count) else {
                return nil
            }
            var value = String(decoding: body[(start + open.count)..<end].prefix(300).map { $0 < 0x20 ? UInt8(ascii: " ") : $0 },
                               as: UTF8.self)
            if value.hasPrefix("<![CDATA["), value.hasSuffix("]]>") { value = String(value.dropFirst(9).dropLast(3)) }
            return value.isEmpty ? nil : value
        }
        switch (element("Code"), element("Message")) {
        case let (code?, message?): return " \(code): \(message)"
        case let (code?, nil): return " \(code)"
        case let (nil, message?): return " \(message)"
        case (nil, nil): return ""
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        return (from...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// What to check after a refusal.
    private static func hint(_ status: Int) -> String {
        switch status {
        case 301, 307, 400: " (check AWS_REGION and AWS_ENDPOINT_URL)"
        case 403: " (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and the bucket's policy)"
        case 404: " (no such bucket? check the bucket name and AWS_ENDPOINT_URL)"
        default: ""
        }
    }
}

/// A response's body as it arrives: all of it up to `limit`, and whether more came.
private final class ResponseBody {
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false

    init(limit: Int) { self.limit = limit }
}

private let responseBodyCallback: curl_write_callback = { buffer, size, count, userdata in
    let body = Unmanaged<ResponseBody>.fromOpaque(userdata!).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    guard body.bytes.count + bytes.count <= body.limit else {
        body.overflowed = true
        return 0
    }
    body.bytes.append(contentsOf: bytes)
    return size * count
}

private let stopCallback: curl_xferinfo_callback = { userdata, _, _, _, _ in
    Unmanaged<S3Client.Stop>.fromOpaque(userdata!).takeUnretainedValue().requested ? 1 : 0
}
