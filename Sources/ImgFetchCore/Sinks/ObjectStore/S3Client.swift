import CCurl
import FoundationEssentials
import Glibc
import Synchronization

/// Requests to an S3-compatible object store. Each is a `StoreExchange` that the run's engine
/// runs beside the downloads (`S3Client(access:settings:downloader:stop:)`), or a small engine of
/// the client's own: the same multi loop, retries (`RetryPolicy`: timeouts, resets, 408, 429 and
/// 5xx, with backoff and Retry-After, and S3's 400 `RequestTimeout`), per-host limits, timeouts
/// and cancellation. libcurl signs each attempt with AWS Signature Version 4
/// (`CURLOPT_AWS_SIGV4`); the payload's SHA-256 goes in `x-amz-content-sha256`, which libcurl
/// signs as the payload hash and the store checks against the bytes it received.
///
/// This type knows S3: keys and URLs (`S3Access`), the headers to sign, what each answer means
/// (`judge`) and the XML replies. A refusal (403, a missing bucket, …) is not retried. Every
/// failure is a `storage` error that names the object, says what the store answered and what to
/// check. A client has no handle of its own, so any thread may use it, and several at once.
public final class S3Client: Sendable {
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

    /// Set from any thread to end the requests in progress and every retry (`cancelled`).
    public typealias Stop = CancelSignal

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
    private let transport: StoreTransport
    /// What the client's failures say of the store; nil: no one watches (a check before the run).
    private let health: StoreHealth?
    /// Where the multipart uploads in progress are noted, for a later run to abort them if this one dies.
    private let journal: UploadJournal?
    /// The engine the client made for itself, closed with the client.
    private let ownEngine: Engine?

    /// A client whose requests run on `downloader`'s engine, beside its downloads. `journal` notes
    /// its multipart uploads while they are in progress.
    public init(access: S3Access, settings: Settings, downloader: ImageDownloader, stop: Stop = Stop(), health: StoreHealth? = nil,
                journal: UploadJournal? = nil) {
        self.access = access
        self.settings = settings
        self.stop = stop
        self.health = health
        self.journal = journal
        if let transport = downloader.storeTransport {
            self.transport = transport
            ownEngine = nil
        } else {
            let engine = Self.makeEngine(settings)
            transport = engine
            ownEngine = engine
        }
    }

    /// A client with an engine of its own (a check before the run, or a program without a downloader).
    public init(access: S3Access, settings: Settings, stop: Stop = Stop(), health: StoreHealth? = nil, journal: UploadJournal? = nil) {
        self.access = access
        self.settings = settings
        self.stop = stop
        self.health = health
        self.journal = journal
        let engine = Self.makeEngine(settings)
        transport = engine
        ownEngine = engine
    }

    private static func makeEngine(_ settings: Settings) -> Engine {
        var configuration = DownloaderConfiguration(outputDirectory: "/")
        configuration.retries = settings.retry.maxRetries
        configuration.concurrency = 8
        configuration.perHost = 8
        configuration.userAgent = settings.userAgent
        // Nothing of the configuration that can fail (a CA file, a cookie jar, --resolve) is set.
        guard let engine = try? Engine(configuration: configuration) else { fatalError("cannot start libcurl's multi interface") }
        return engine
    }

    deinit {
        ownEngine?.close()
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
        let body: StoreExchange.Body
        if size < Self.inMemoryPut {
            // Read once: the bytes sent are the bytes hashed.
            var bytes = [UInt8](repeating: 0, count: size)
            let count = bytes.withUnsafeMutableBytes { FileDescriptorIO.read(descriptor, into: $0, at: 0) }
            guard count == size else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
            let hasher = DigestHasher()
            bytes.withUnsafeBytes { hasher.update($0) }
            digest = hasher.finish()
            body = .bytes(bytes)
        } else {
            digest = try SHA256.hexDigest(ofFile: descriptor, path: path)
            // Streamed from the file, with `Expect: 100-continue` (`EasyHandleOptions.configureStore`).
            body = .file(descriptor: descriptor, offset: 0, length: size, path: path)
        }
        return try request(.put(body), bucket: bucket, key: key, payloadHash: digest,
                           headers: ["Content-Type: \(contentType)"]).etag
    }

    /// Puts `bytes` as object `key` (a small object made in memory).
    @discardableResult
    public func put(bytes: [UInt8], bucket: String, key: String, contentType: String) throws(DownloadError) -> String? {
        let hasher = DigestHasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return try request(.put(.bytes(bytes)), bucket: bucket, key: key, payloadHash: hasher.finish(),
                           headers: ["Content-Type: \(contentType)"]).etag
    }

    /// Deletes object `key` (S3 answers 204 whether or not it existed).
    public func delete(bucket: String, key: String) throws(DownloadError) {
        _ = try request(.delete, bucket: bucket, key: key, payloadHash: Self.emptyHash, headers: [])
    }

    /// The metadata header every multipart upload is created with (the object keeps it): its mark
    /// of imgfetch's.
    public static let uploadMarker = "x-amz-meta-made-by: imgfetch"

    /// A multipart upload: created (with `uploadMarker`, and noted in the journal), then each part
    /// put (and retried) on its own, then completed; aborted when a part or the completion fails,
    /// so that the store keeps no orphaned parts. The journal's note goes once the upload is over;
    /// a run that dies before leaves it, for the next run to abort the upload.
    private func putInParts(descriptor: Int32, path: String, size: Int, bucket: String, key: String,
                            contentType: String) throws(DownloadError) -> String? {
        let name = "s3://\(bucket)/\(key)"
        let created = try request(.post(query: "uploads=", body: []), bucket: bucket, key: key, payloadHash: Self.emptyHash,
                                  headers: ["Content-Type: \(contentType)", Self.uploadMarker])
        guard let upload = XMLText.element("UploadId", in: created.body, limit: Int.max).map(XMLText.unescaped) else {
            throw DownloadError(.storage, "POST \(name)?uploads: the store's answer has no UploadId")
        }
        let note = journal?.record(UploadJournal.Entry(bucket: bucket, key: key, uploadID: upload))
        let uploadQuery = "uploadId=" + S3Access.encodeQueryValue(upload)
        do throws(DownloadError) {
            let partSize = max(settings.partSize, (size + Self.mostParts - 1) / Self.mostParts)
            var parts: [String] = []
            var offset = 0
            while offset < size {
                let length = min(partSize, size - offset)
                let number = parts.count + 1
                let digest = try SHA256.hexDigest(ofRange: descriptor, offset: offset, length: length, path: path)
                let answer = try request(.putPart(query: "partNumber=\(number)&" + uploadQuery,
                                                  body: .file(descriptor: descriptor, offset: offset, length: length, path: path)),
                                         bucket: bucket, key: key, payloadHash: digest, headers: [])
                guard let etag = answer.etag else {
                    throw DownloadError(.storage, "PUT \(name) part \(number): the store's answer has no ETag")
                }
                parts.append(etag)
                offset += length
            }
            let list = parts.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLText.escaped($0.element))</ETag></Part>" }
            let text = "<CompleteMultipartUpload>" + list.joined() + "</CompleteMultipartUpload>"
            let completed = try request(.post(query: uploadQuery, body: Array(text.utf8)), bucket: bucket, key: key,
                                        payloadHash: SHA256.hexDigest(text), headers: ["Content-Type: application/xml"])
            note?.remove()
            return XMLText.element("ETag", in: completed.body, limit: Int.max).map(XMLText.unescaped) ?? completed.etag
        } catch {
            // Also when the run is being cancelled: one attempt, which no stop ends (parts left
            // behind would cost storage until the bucket's lifecycle removed them).
            if abortUpload(UploadJournal.Entry(bucket: bucket, key: key, uploadID: upload), once: true) {
                note?.remove()
            }
            throw error
        }
    }

    /// Aborts a multipart upload; true once the store has none by that ID (aborted now, or
    /// before: S3 answers 404 `NoSuchUpload` to an upload completed or aborted already). With
    /// `once`, one attempt that no stop ends.
    public func abortUpload(_ upload: UploadJournal.Entry, once: Bool = false) -> Bool {
        (try? request(.abort(query: "uploadId=" + S3Access.encodeQueryValue(upload.uploadID)), bucket: upload.bucket, key: upload.key,
                      payloadHash: Self.emptyHash, headers: [], once: once)) != nil
    }

    /// A multipart upload the store has in progress.
    public struct IncompleteUpload: Sendable, Equatable {
        public let key: String
        public let uploadID: String
        /// When it was created, in seconds since the epoch (nil: the store did not say).
        public let initiated: Double?
    }

    /// The multipart uploads in progress under `prefix` in `bucket` (ListMultipartUploads, a page
    /// of up to 1000 at a time); nil when the store does not list them (keys without
    /// `s3:ListBucketMultipartUploads`, or a store without the call), or has more than `pages` pages.
    public func incompleteUploads(bucket: String, prefix: String, pages: Int = 20) -> [IncompleteUpload]? {
        var uploads: [IncompleteUpload] = []
        var marker: (key: String, upload: String)?
        for _ in 0..<pages {
            // Names and values sorted, as the signature needs them.
            var query: [(name: String, value: String)] = [("prefix", prefix), ("uploads", "")]
            if let marker { query += [("key-marker", marker.key), ("upload-id-marker", marker.upload)] }
            let text = query.sorted { $0.name < $1.name }.map { "\($0.name)=\(S3Access.encodeQueryValue($0.value))" }.joined(separator: "&")
            // A store that ignores `?uploads` (and lists objects) does not list them.
            guard let answer = try? request(.list(query: text), bucket: bucket, key: "", payloadHash: Self.emptyHash, headers: []),
                  answer.status == 200,
                  XMLText.find(Array("<ListMultipartUploadsResult".utf8), in: answer.body, from: 0) != nil else { return nil }
            let page = Self.parseUploads(answer.body)
            uploads += page.uploads
            guard let next = page.next else { return uploads }
            marker = next
        }
        return nil  // more than `pages` pages: not the whole list
    }

    /// One page of a ListMultipartUploads answer: its uploads, and where the next page starts when it is truncated.
    static func parseUploads(_ body: [UInt8]) -> (uploads: [IncompleteUpload], next: (key: String, upload: String)?) {
        let open = Array("<Upload>".utf8), close = Array("</Upload>".utf8)
        var uploads: [IncompleteUpload] = []
        var from = 0
        while let start = XMLText.find(open, in: body, from: from), let end = XMLText.find(close, in: body, from: start) {
            let item = Array(body[start..<end])
            if let key = XMLText.element("Key", in: item, limit: 4096).map(XMLText.unescaped),
               let upload = XMLText.element("UploadId", in: item, limit: 4096).map(XMLText.unescaped) {
                uploads.append(IncompleteUpload(key: key, uploadID: upload,
                                                initiated: XMLText.element("Initiated", in: item).flatMap(ISO8601Date.parse)))
            }
            from = end + close.count
        }
        guard XMLText.element("IsTruncated", in: body) == "true",
              let key = XMLText.element("NextKeyMarker", in: body, limit: 4096).map(XMLText.unescaped) else { return (uploads, nil) }
        let upload = XMLText.element("NextUploadIdMarker", in: body, limit: 4096).map(XMLText.unescaped) ?? ""
        return (uploads, (key, upload))
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
        guard var exchange = try? exchange(.head, url: access.objectURL(bucket: bucket, key: ""), payloadHash: Self.emptyHash,
                                           headers: [], judge: { _ in .answered }) else { return .unknown }
        exchange.once = true
        guard let answer = try? transport.run(exchange, stop: stop) else { return .unknown }
        if let region = answer.region, region != access.region, [301, 307, 400].contains(answer.status) {
            return .inRegion(region)
        }
        switch answer.status {
        case 200..<300: return .exists
        case 404: return .missing
        default: return .unknown
        }
    }

    /// SHA-256 of no bytes: the payload hash of GET and HEAD.
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private enum Method {
        case put(StoreExchange.Body)
        case get(limit: Int)
        case head
        /// A POST with a small body (a multipart upload's creation and completion).
        case post(query: String, body: [UInt8])
        /// One part of a multipart upload: a range of the file.
        case putPart(query: String, body: StoreExchange.Body)
        /// A multipart upload's abort (DELETE).
        case abort(query: String)
        /// An object's deletion (the write check's).
        case delete
        /// A GET of the bucket with a query (the list of multipart uploads in progress).
        case list(query: String)

        var exchangeMethod: StoreExchange.Method {
            switch self {
            case .put, .putPart: .put
            case .get, .list: .get
            case .head: .head
            case .post: .post
            case .abort, .delete: .delete
            }
        }

        var name: String { exchangeMethod.rawValue }

        /// Whether the request changes the store (a refusal of it says the run cannot write).
        var isWrite: Bool {
            switch self {
            case .put, .post, .putPart, .abort, .delete: true
            case .get, .head, .list: false
            }
        }

        /// The query string, encoded as S3 signs it (names and values sorted).
        var query: String? {
            switch self {
            case .post(let query, _), .putPart(let query, _), .abort(let query), .list(let query): query
            case .put, .get, .head, .delete: nil
            }
        }

        var body: StoreExchange.Body {
            switch self {
            case .put(let body), .putPart(_, let body): body
            case .post(_, let bytes): .bytes(bytes)
            case .get, .head, .abort, .delete, .list: .empty
            }
        }

        /// Most bytes of the answer's body kept.
        var responseLimit: Int {
            switch self {
            case .get(let limit): limit
            case .list: 4 << 20
            default: S3Client.errorBodyLimit
            }
        }
    }

    /// The request, run by the engine with its retries: a 2xx answer (or a 404 of GET and HEAD,
    /// which says "none"). With `once`, one attempt that no stop ends (an abort while the run is
    /// cancelled).
    private func request(_ method: Method, bucket: String, key: String, payloadHash: String,
                         headers: [String], once: Bool = false) throws(DownloadError) -> StoreAnswer {
        let url = access.objectURL(bucket: bucket, key: key) + (method.query.map { "?" + $0 } ?? "")
        var name = "s3://\(bucket)/\(key)"
        if case .putPart(let query, _) = method, let number = query.split(separator: "&").first?.dropFirst("partNumber=".count) {
            name += " (part \(number))"
        }
        // A store that stopped the run is not asked again (an abort still is: it frees storage).
        if !once, let stopped = health?.stopError { throw stopped }
        let endpoint = access.endpoint ?? url
        var exchange: StoreExchange
        let verdict = LastVerdict()
        do {
            exchange = try self.exchange(method.exchangeMethod, url: url, payloadHash: payloadHash, headers: headers,
                                         judge: Self.judge(method, name: name, endpoint: endpoint, keys: access.credentials.sourceName,
                                                           verdict: verdict))
        } catch {
            health?.noKeys(error)
            throw error
        }
        exchange.body = method.body
        exchange.responseLimit = method.responseLimit
        exchange.once = once
        do {
            let answer = try transport.run(exchange, stop: stop)
            health?.succeeded()
            return answer
        } catch where error.kind == .cancelled {
            throw DownloadError(.cancelled, "cancelled during \(method.name) \(name)")
        } catch {
            let (refused, status) = verdict.value.withLock { ($0.refusal, $0.status) }
            // A refused read says nothing of the store's health (a HEAD of a missing object is 403
            // to keys without s3:ListBucket); a failure after the retries does.
            if let refused {
                if method.isWrite { health?.failed(error, refusal: refused, status: status) }
            } else {
                health?.failed(error, refusal: nil, status: nil)
            }
            throw error
        }
    }

    /// What the judge last said of an exchange's attempts: the store's refusal (its error code,
    /// "" for none) when it refused, and the status.
    private final class LastVerdict: Sendable {
        let value = Mutex<(refusal: String?, status: Int?)>((nil, nil))
    }

    /// The keys requests are signed with now: the provider's, fetched or renewed on this client's
    /// engine when they must be.
    public func credentials() throws(DownloadError) -> AWSCredentials {
        try access.credentials.current(CredentialFetcher(transport: transport, stop: stop, userAgent: settings.userAgent,
                                                         caBundle: access.caBundle))
    }

    /// An exchange of `method` with `url`, signed, with the client's settings.
    private func exchange(_ method: StoreExchange.Method, url: String, payloadHash: String, headers: [String],
                          judge: @escaping @Sendable (StoreAttempt) -> StoreVerdict) throws(DownloadError) -> StoreExchange {
        let keys = try credentials()
        var all = headers + ["x-amz-content-sha256: \(payloadHash)"]
        if let token = keys.sessionToken { all.append("x-amz-security-token: \(token)") }
        return StoreExchange(method: method, url: url, headers: all,
                             signing: StoreExchange.Signing(scope: "aws:amz:\(access.region):s3", accessKey: keys.accessKey,
                                                            secretKey: keys.secretKey),
                             caBundle: access.caBundle, connectTimeout: settings.connectTimeout, timeout: settings.timeout,
                             userAgent: settings.userAgent, responseLimit: Self.errorBodyLimit, judge: judge)
    }

    /// What an attempt's answer means for `method` on object `name`: the answer, a failure worth a
    /// retry, or a refusal.
    private static func judge(_ method: Method, name: String, endpoint: String, keys: String,
                              verdict: LastVerdict) -> @Sendable (StoreAttempt) -> StoreVerdict {
        let limit = method.responseLimit
        let isRead = switch method {
        case .get, .head: true
        case .put, .post, .putPart, .abort, .delete, .list: false
        }
        let isAbort = if case .abort = method { true } else { false }
        let isPost = if case .post = method { true } else { false }
        let verb = method.name
        return { attempt in
            let body = attempt.answer.body
            let status = attempt.answer.status
            if attempt.code == CURLE_WRITE_ERROR && attempt.overflowed {
                return .failed(DownloadError(.storage, "\(verb) \(name): the object is larger than \(limit) bytes"))
            }
            guard attempt.code == CURLE_OK else {
                let error = DownloadError(.storage, "\(verb) \(name) failed: \(attempt.detail) "
                    + "(check AWS_ENDPOINT_URL and that the store is reachable: \(endpoint))")
                // libcurl cannot rewind a file body for its own resend on a dropped reused
                // connection: the next attempt reads it afresh.
                let transient = RetryPolicy.isTransient(curlCode: attempt.code) || attempt.code == CURLE_SEND_FAIL_REWIND
                return transient ? .retry(error) : .failed(error)
            }
            // A multipart creation or completion is done only when its answer says so: S3 (and
            // MinIO, after keep-alive spaces) may answer 200 and put an error in the body.
            if (200..<300).contains(status), isPost,
               XMLText.find(Array("<InitiateMultipartUploadResult".utf8), in: body, from: 0) == nil,
               XMLText.find(Array("<CompleteMultipartUploadResult".utf8), in: body, from: 0) == nil {
                let errorCode = XMLText.element("Code", in: body)
                let said = XMLText.errorText(body)
                let error = DownloadError(.storage, "POST \(name): HTTP \(status)\(said.isEmpty ? ", but no result in the answer" : said)")
                return errorCode == nil || errorCode == "InternalError" || errorCode == "SlowDown" ? .retry(error) : .failed(error)
            }
            if (200..<300).contains(status) { return .answered }
            let errorCode = XMLText.element("Code", in: body)
            // A GET or HEAD of a missing object says "none"; of a missing bucket, that is an error.
            if status == 404, errorCode != "NoSuchBucket", isRead { return .answered }
            // An abort of an upload that is no more (completed or aborted already) has done its work.
            if status == 404, errorCode == "NoSuchUpload", isAbort { return .answered }
            let error = DownloadError(.storage, "\(verb) \(name): HTTP \(status)\(XMLText.errorText(body))\(hint(status, code: errorCode, keys: keys))")
            let transient = RetryPolicy.isTransient(status: status) || (status == 400 && errorCode == "RequestTimeout")
            verdict.value.withLock { $0 = (transient ? nil : errorCode ?? "", status) }
            return transient ? .retry(error) : .failed(error)
        }
    }

    /// What to check after a refusal.
    private static func hint(_ status: Int, code: String?, keys: String) -> String {
        switch (status, code) {
        case (301, _), (307, _), (400, "AuthorizationHeaderMalformed"), (400, "IllegalLocationConstraintException"):
            " (check AWS_REGION and AWS_ENDPOINT_URL)"
        case (403, _): " (check the keys from \(keys) and the bucket's policy)"
        case (404, _): " (check the bucket's name and AWS_ENDPOINT_URL)"
        default: ""
        }
    }
}
