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
/// 5xx, with backoff, and S3's 400 `RequestTimeout`); a refusal (403, a missing bucket, …) is
/// not. Every failure is a `storage` error that names the object, says what the store answered
/// and what to check.
///
/// Used only by the thread that created it: the handle is that thread's.
public final class S3Client {
    public struct Settings: Sendable {
        public var retry: RetryPolicy
        public var connectTimeout: Double
        /// Abort a request under 1 KB/s for this many seconds.
        public var timeout: Double
        public var userAgent: String
        /// Objects larger than this go up in parts of this size (a multipart upload); S3 takes
        /// parts of 5 MiB to 5 GiB, and 10,000 of them at most (larger parts are used then).
        public var partSize: Int

        public init(retry: RetryPolicy, connectTimeout: Double = 10, timeout: Double = 15, userAgent: String,
                    partSize: Int = S3Client.defaultPartSize) {
            self.retry = retry
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.userAgent = userAgent
            self.partSize = partSize
        }
    }

    /// Set from any thread to end a request in progress and every retry (`cancelled`).
    public final class Stop: Sendable {
        private let flag = Atomic<Bool>(false)
        public init() {}
        public func request() { flag.store(true, ordering: .relaxed) }
        public var requested: Bool { flag.load(ordering: .relaxed) }
    }

    /// What a HEAD says of an object.
    public struct ObjectInfo: Sendable, Equatable {
        public let size: Int
        /// The store's entity tag, quotes included (`"9b2c…"`); nil when it sent none.
        public let etag: String?

        public init(size: Int, etag: String?) {
            self.size = size
            self.etag = etag
        }
    }

    /// The default part size of multipart uploads: 64 MiB (so up to 625 GiB in 10,000 parts).
    public static let defaultPartSize = 64 << 20
    /// S3's limits: the most parts an object may have, and the largest object (5 TiB).
    static let mostParts = 10_000
    static let largestObject = 5 << 40
    /// Bodies smaller than this are sent from memory, without `Expect: 100-continue` (one round
    /// trip less per object); larger ones stream from their file and wait for the store's 100.
    static let inMemoryPut = 1 << 20
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
    /// answered 200, with the stored object's entity tag.
    @discardableResult
    public func put(file path: String, bucket: String, key: String, contentType: String) throws(DownloadError) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
        let size = Int(info.st_size)
        guard size <= Self.largestObject else {
            throw DownloadError(.storage, "s3://\(bucket)/\(key) is \(size) bytes, more than S3 stores in one object (5 TiB); "
                + "make it smaller (for shards: fewer --shard-samples)")
        }
        if size > settings.partSize {
            return try putInParts(descriptor: descriptor, path: path, size: size, bucket: bucket, key: key, contentType: contentType)
        }
        let digest: String
        let body: Body
        if size < Self.inMemoryPut {
            // Read once: the bytes sent are the bytes hashed.
            var bytes = [UInt8](repeating: 0, count: size)
            let count = bytes.withUnsafeMutableBytes { FileDescriptorIO.read(descriptor, into: $0, at: 0) }
            guard count == size else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
            let hasher = SHA256Hasher()
            bytes.withUnsafeBytes { hasher.update($0) }
            digest = hasher.finish()
            body = .memory(bytes)
        } else {
            digest = try SHA256.hexDigest(ofFile: descriptor, path: path)
            // libcurl's `Expect: 100-continue` stays here: a refusal then costs no body. It cannot
            // be turned off with an empty `Expect:` header, which libcurl 7.88 signs but does not send.
            body = .file(descriptor: descriptor, path: path, size: size)
        }
        return try request(.put(body), bucket: bucket, key: key, payloadHash: digest,
                           headers: ["Content-Type: \(contentType)"]).etag
    }

    /// A multipart upload: created, then each part put (and retried) on its own, then completed;
    /// aborted when a part or the completion fails, so that the store keeps no orphaned parts.
    private func putInParts(descriptor: Int32, path: String, size: Int, bucket: String, key: String,
                            contentType: String) throws(DownloadError) -> String? {
        let name = "s3://\(bucket)/\(key)"
        let created = try request(.post(query: "uploads=", body: []), bucket: bucket, key: key, payloadHash: Self.emptyHash,
                                  headers: ["Content-Type: \(contentType)"])
        guard let upload = Self.errorElement("UploadId", in: created.body, limit: Int.max).map(Self.xmlUnescaped) else {
            throw DownloadError(.storage, "POST \(name)?uploads: the store's answer has no UploadId")
        }
        let uploadQuery = "uploadId=" + S3Access.encodeQueryValue(upload)
        do throws(DownloadError) {
            let partSize = max(settings.partSize, (size + Self.mostParts - 1) / Self.mostParts)
            var parts: [String] = []
            var offset = 0
            while offset < size {
                let length = min(partSize, size - offset)
                let number = parts.count + 1
                let digest = try SHA256.hexDigest(ofRange: descriptor, offset: offset, length: length, path: path)
                let answer = try request(.putPart(query: "partNumber=\(number)&" + uploadQuery, descriptor: descriptor, path: path,
                                                  offset: offset, length: length),
                                         bucket: bucket, key: key, payloadHash: digest, headers: [])
                guard let etag = answer.etag else {
                    throw DownloadError(.storage, "PUT \(name) part \(number): the store's answer has no ETag")
                }
                parts.append(etag)
                offset += length
            }
            let list = parts.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(Self.xmlEscaped($0.element))</ETag></Part>" }
            let text = "<CompleteMultipartUpload>" + list.joined() + "</CompleteMultipartUpload>"
            let completed = try request(.post(query: uploadQuery, body: Array(text.utf8)), bucket: bucket, key: key,
                                        payloadHash: SHA256.hexDigest(text), headers: ["Content-Type: application/xml"])
            return Self.errorElement("ETag", in: completed.body, limit: Int.max).map(Self.xmlUnescaped) ?? completed.etag
        } catch {
            // Also when the run is being cancelled: one attempt, which no stop ends (parts left
            // behind would cost storage until the bucket's lifecycle removed them).
            _ = try? request(.abort(query: uploadQuery), bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [],
                             once: true)
            throw error
        }
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("\"", with: "&quot;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }

    static func xmlUnescaped(_ text: String) -> String {
        text.replacing("&quot;", with: "\"").replacing("&#34;", with: "\"").replacing("&lt;", with: "<")
            .replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }

    /// The bytes of object `key` (at most `limit`; a larger object is an error) and its entity
    /// tag, or nil when there is no such object.
    public func get(bucket: String, key: String, limit: Int) throws(DownloadError) -> (bytes: [UInt8], etag: String?)? {
        let response = try request(.get(limit: limit), bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
        return response.status == 404 ? nil : (response.body, response.etag)
    }

    /// An entity tag as stores differ in writing it: without a weak marker and without quotes.
    public static func plainTag(_ etag: String?) -> String? {
        guard var tag = etag?.trimmingWhitespace, !tag.isEmpty else { return nil }
        if tag.hasPrefix("W/") { tag.removeFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
        return tag
    }

    /// The size and entity tag of object `key`, or nil when there is no such object.
    public func head(bucket: String, key: String) throws(DownloadError) -> ObjectInfo? {
        let response = try request(.head, bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
        guard response.status != 404, let length = response.length else { return nil }
        return ObjectInfo(size: length, etag: response.etag)
    }

    /// What one HEAD of a bucket says of it.
    public enum BucketAnswer: Equatable, Sendable {
        case exists
        /// 404: no such bucket.
        case missing
        /// 301 (or 400) naming another region in `x-amz-bucket-region`.
        case inRegion(String)
        /// 403 (keys that may write but not list, which is no reason to stop), no answer, or
        /// anything else: the uploads will say.
        case unknown
    }

    /// One HEAD of `bucket`, without retries (a run waits for it).
    public func checkBucket(_ bucket: String) -> BucketAnswer {
        guard let (response, _, _) = try? attempt(.head, url: access.objectURL(bucket: bucket, key: ""), name: "s3://\(bucket)",
                                                 payloadHash: Self.emptyHash, headers: [], stop: stop) else { return .unknown }
        if let region = response.region, region != access.region, [301, 307, 400].contains(response.status) {
            return .inRegion(region)
        }
        switch response.status {
        case 200..<300: return .exists
        case 404: return .missing
        default: return .unknown
        }
    }

    /// SHA-256 of no bytes: the payload hash of GET and HEAD.
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private enum Body {
        case memory([UInt8])
        /// Read through a duplicate of `descriptor`, rewound for each attempt.
        case file(descriptor: Int32, path: String, size: Int)
    }

    private enum Method {
        case put(Body)
        case get(limit: Int)
        case head
        /// A POST with a small body (a multipart upload's creation and completion).
        case post(query: String, body: [UInt8])
        /// One part of a multipart upload: `length` bytes of the file from `offset`.
        case putPart(query: String, descriptor: Int32, path: String, offset: Int, length: Int)
        /// A multipart upload's abort (DELETE).
        case abort(query: String)

        var name: String {
            switch self {
            case .put, .putPart: "PUT"
            case .get: "GET"
            case .head: "HEAD"
            case .post: "POST"
            case .abort: "DELETE"
            }
        }

        /// The query string, encoded as S3 signs it (names and values sorted).
        var query: String? {
            switch self {
            case .post(let query, _), .putPart(let query, _, _, _, _), .abort(let query): query
            case .put, .get, .head: nil
            }
        }
    }

    private struct Response {
        var status: Int
        var body: [UInt8]
        var length: Int?
        var etag: String?
        /// `x-amz-bucket-region`, which S3 sends with a wrong region's refusal.
        var region: String?
    }

    /// The request, with its retries: a 2xx answer (or a 404 of GET and HEAD, which says "none").
    /// With `once`, one attempt that no stop ends (an abort while the run is cancelled).
    private func request(_ method: Method, bucket: String, key: String, payloadHash: String,
                         headers: [String], once: Bool = false) throws(DownloadError) -> Response {
        let url = access.objectURL(bucket: bucket, key: key) + (method.query.map { "?" + $0 } ?? "")
        var name = "s3://\(bucket)/\(key)"
        if case .putPart(let query, _, _, _, _) = method, let number = query.split(separator: "&").first?.dropFirst("partNumber=".count) {
            name += " (part \(number))"
        }
        var failed = 0
        while true {
            if stop.requested && !once { throw DownloadError(.cancelled, "cancelled before \(method.name) \(name)") }
            let (response, failure, transient) = try attempt(method, url: url, name: name, payloadHash: payloadHash, headers: headers,
                                                             stop: once ? Stop() : stop)
            guard let failure else { return response }
            failed += 1
            guard transient, !once, !stop.requested,
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
                         headers: [String], stop: Stop) throws(DownloadError) -> (Response, DownloadError?, Bool) {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        let exchange = Exchange(handle: handle, limit: { if case .get(let limit) = method { limit } else { Self.errorBodyLimit } }(),
                                stop: stop)
        let box = Unmanaged.passRetained(exchange)
        defer { box.release() }
        var list: UnsafeMutablePointer<curl_slist>?
        var all = headers + ["x-amz-content-sha256: \(payloadHash)"]
        if let token = access.sessionToken { all.append("x-amz-security-token: \(token)") }
        for header in all { list = curl_slist_append(list, header) }
        defer { curl_slist_free_all(list) }

        CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        CCurl_easy_setopt_string(handle, CURLOPT_URL, url)
        // The path is sent as signed: libcurl must not remove dot segments or re-encode it.
        CCurl_easy_setopt_long(handle, CURLOPT_PATH_AS_IS, 1)
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
        CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque())
        CCurl_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, responseHeaderCallback)
        CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, box.toOpaque())
        CCurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
        CCurl_easy_setopt_xferinfo_callback(handle, stopCallback)
        CCurl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, box.toOpaque())

        var file: UnsafeMutablePointer<FILE>?
        defer { if let file { fclose(file) } }
        switch method {
        case .put(.memory(let bytes)):
            // A POST body sent as PUT: libcurl adds no `Expect` to a body this small.
            CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "PUT")
            setPostBody(bytes)
        case .put(.file(let descriptor, let path, let size)):
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            if copy >= 0 { file = fdopen(copy, "rb") }
            guard let file, lseek(copy, 0, SEEK_SET) == 0 else {
                if copy >= 0 && file == nil { close(copy) }
                throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())")
            }
            CCurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            CCurl_easy_setopt_pointer(handle, CURLOPT_READDATA, UnsafeMutableRawPointer(file))
            CCurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
        case .get:
            break
        case .head:
            CCurl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case .post(_, let bytes):
            setPostBody(bytes)
        case .putPart(_, let descriptor, _, let offset, let length):
            exchange.part = PartReader(descriptor: descriptor, offset: offset, length: length)
            CCurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            CCurl_easy_setopt_write_callback(handle, CURLOPT_READFUNCTION, partReadCallback)
            CCurl_easy_setopt_pointer(handle, CURLOPT_READDATA, box.toOpaque())
            CCurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
        case .abort:
            CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "DELETE")
        }

        let code = curl_easy_perform(handle)
        var status = 0
        CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var length: curl_off_t = -1
        CCurl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        let response = Response(status: status, body: exchange.body, length: length >= 0 ? Int(length) : nil, etag: exchange.etag,
                                region: exchange.region)
        if code == CURLE_ABORTED_BY_CALLBACK && stop.requested {
            throw DownloadError(.cancelled, "cancelled during \(method.name) \(name)")
        }
        if let failure = exchange.part?.failure {
            throw DownloadError(.filesystem, "cannot read \(name)'s file: \(Errno.describe(failure))")
        }
        if code == CURLE_WRITE_ERROR && exchange.overflowed {
            return (response, DownloadError(.storage, "\(method.name) \(name): the object is larger than \(exchange.limit) bytes"), false)
        }
        guard code == CURLE_OK else {
            let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
            // A part's body cannot be rewound by libcurl (its own resend on a dropped reused
            // connection): the next attempt reads it afresh.
            return (response, DownloadError(.storage, "\(method.name) \(name) failed: \(detail) "
                        + "(check AWS_ENDPOINT_URL and that the store is reachable: \(access.endpoint ?? url))"),
                    RetryPolicy.isTransient(curlCode: code) || code == CURLE_SEND_FAIL_REWIND)
        }
        // A multipart creation or completion is done only when its answer says so: S3 (and MinIO,
        // after keep-alive spaces) may answer 200 and put an error in the body.
        if (200..<300).contains(status), case .post = method,
           Self.find(Array("<InitiateMultipartUploadResult".utf8), in: exchange.body, from: 0) == nil,
           Self.find(Array("<CompleteMultipartUploadResult".utf8), in: exchange.body, from: 0) == nil {
            let errorCode = Self.errorElement("Code", in: exchange.body)
            let said = Self.errorText(exchange.body)
            return (response, DownloadError(.storage, "POST \(name): HTTP \(status)\(said.isEmpty ? ", but no result in the answer" : said)"),
                    errorCode == nil || errorCode == "InternalError" || errorCode == "SlowDown")
        }
        if (200..<300).contains(status) { return (response, nil, false) }
        let errorCode = Self.errorElement("Code", in: exchange.body)
        // A GET or HEAD of a missing object says "none"; of a missing bucket, that is an error.
        if status == 404, errorCode != "NoSuchBucket" {
            switch method {
            case .get, .head: return (response, nil, false)
            case .put, .post, .putPart, .abort: break
            }
        }
        let said = Self.errorText(exchange.body)
        let transient = RetryPolicy.isTransient(status: status) || (status == 400 && errorCode == "RequestTimeout")
        return (response, DownloadError(.storage, "\(method.name) \(name): HTTP \(status)\(said)\(Self.hint(status, code: errorCode))"),
                transient)
    }

    /// A POST body, copied by libcurl at once (an empty one still needs a pointer).
    private func setPostBody(_ bytes: [UInt8]) {
        CCurl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
        (bytes.isEmpty ? [0] : bytes).withUnsafeBytes { raw in
            _ = CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
        }
    }

    /// ` AccessDenied: Access Denied` from S3's XML error body, or nothing.
    static func errorText(_ body: [UInt8]) -> String {
        switch (errorElement("Code", in: body), errorElement("Message", in: body)) {
        case let (code?, message?): return " \(code): \(message)"
        case let (code?, nil): return " \(code)"
        case let (nil, message?): return " \(message)"
        case (nil, nil): return ""
        }
    }

    /// The text of the first `<name>` element of an XML error body (300 bytes at most, control
    /// characters as spaces, a CDATA section unwrapped), or nil.
    static func errorElement(_ name: String, in body: [UInt8], limit: Int = 300) -> String? {
        let open = Array("<\(name)>".utf8), close = Array("</\(name)>".utf8)
        guard let start = find(open, in: body, from: 0), let end = find(close, in: body, from: start + open.count) else {
            return nil
        }
        var value = String(decoding: body[(start + open.count)..<end].prefix(limit).map { $0 < 0x20 ? UInt8(ascii: " ") : $0 },
                           as: UTF8.self)
        if value.hasPrefix("<![CDATA["), value.hasSuffix("]]>") { value = String(value.dropFirst(9).dropLast(3)) }
        return value.isEmpty ? nil : value
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        return (from...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// What to check after a refusal.
    private static func hint(_ status: Int, code: String?) -> String {
        switch (status, code) {
        case (301, _), (307, _), (400, "AuthorizationHeaderMalformed"), (400, "IllegalLocationConstraintException"):
            " (check AWS_REGION and AWS_ENDPOINT_URL)"
        case (403, _): " (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and the bucket's policy)"
        case (404, _): " (check the bucket's name and AWS_ENDPOINT_URL)"
        default: ""
        }
    }
}

/// What one request's callbacks gather: the response body up to `limit`, and its `ETag`; and,
/// for a part, where its bytes are read from.
private final class Exchange {
    let handle: OpaquePointer
    let limit: Int
    let stop: S3Client.Stop
    var body: [UInt8] = []
    var overflowed = false
    var etag: String?
    var region: String?
    var part: PartReader?

    init(handle: OpaquePointer, limit: Int, stop: S3Client.Stop) {
        self.handle = handle
        self.limit = limit
        self.stop = stop
    }
}

/// Keeps the body up to the limit. Past it, a 2xx body (an object read with GET) stops the
/// transfer; an error page (a proxy's HTML, say) is only cut, so its status still counts.
private let responseBodyCallback: curl_write_callback = { buffer, size, count, userdata in
    let exchange = Unmanaged<Exchange>.fromOpaque(userdata!).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    guard exchange.body.count + bytes.count <= exchange.limit else {
        var status = 0
        CCurl_easy_getinfo_long(exchange.handle, CURLINFO_RESPONSE_CODE, &status)
        if (200..<300).contains(status) {
            exchange.overflowed = true
            return 0
        }
        exchange.body.append(contentsOf: bytes.prefix(max(0, exchange.limit - exchange.body.count)))
        return size * count
    }
    exchange.body.append(contentsOf: bytes)
    return size * count
}

/// Notes the `ETag` and `x-amz-bucket-region` of the final response.
private let responseHeaderCallback: curl_write_callback = { buffer, size, count, userdata in
    let exchange = Unmanaged<Exchange>.fromOpaque(userdata!).takeUnretainedValue()
    let line = UnsafeRawBufferPointer(start: buffer, count: size * count)
    func value(of name: String) -> String? {
        guard line.count > name.utf8.count, line.prefix(name.utf8.count).map({ $0 | 0x20 }).elementsEqual(name.utf8) else { return nil }
        let value = String(decoding: line.dropFirst(name.utf8.count), as: UTF8.self).trimmingWhitespace
        return value.isEmpty ? nil : value
    }
    if line.starts(with: "HTTP/".utf8) {
        exchange.etag = nil  // a new response (after a 100 Continue, say)
        exchange.region = nil
    } else if let etag = value(of: "etag:") {
        exchange.etag = etag
    } else if let region = value(of: "x-amz-bucket-region:") {
        exchange.region = region
    }
    return size * count
}

/// `length` bytes of a file from `offset`, read with `pread` (the descriptor's offset is not used).
private struct PartReader {
    let descriptor: Int32
    var offset: Int
    var length: Int
    /// The errno of a failed read.
    var failure: Int32?
}

/// libcurl's read callback for a part (the same C type as a write callback).
private let partReadCallback: curl_write_callback = { buffer, size, count, userdata in
    let exchange = Unmanaged<Exchange>.fromOpaque(userdata!).takeUnretainedValue()
    guard var part = exchange.part else { return 0 }
    let wanted = min(size * count, part.length)
    guard wanted > 0 else { return 0 }
    let read = pread(part.descriptor, buffer, wanted, off_t(part.offset))
    guard read > 0 else {
        part.failure = read < 0 ? errno : EIO
        exchange.part = part
        return Int(CURL_READFUNC_ABORT)
    }
    part.offset += read
    part.length -= read
    exchange.part = part
    return read
}

private let stopCallback: curl_xferinfo_callback = { userdata, _, _, _, _ in
    Unmanaged<Exchange>.fromOpaque(userdata!).takeUnretainedValue().stop.requested ? 1 : 0
}
