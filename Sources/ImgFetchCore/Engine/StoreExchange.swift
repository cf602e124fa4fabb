import CCurl

/// A request to an object store, run by the engine beside the downloads: on the same multi
/// handle, with the same retries (`RetryPolicy`, Retry-After), per-host limits and host gates,
/// low-speed timeout and cancellation, as curl's own tool runs an upload as one more transfer of
/// its multi loop.
///
/// What differs from a download: a method and a request body (bytes, or a range of a file, read
/// with `pread` afresh at each attempt); the URL sent exactly as given, since it is signed as it
/// is (`CURLOPT_PATH_AS_IS`); AWS Signature Version 4 computed by libcurl at each attempt, so a
/// retry minutes later is signed anew; the exchange's own header lines and CA bundle, and none of
/// the run's `-H`, `-u` or cookies; no redirect followed; the response body kept in memory up to
/// `responseLimit`; and `judge`, which says what each attempt's answer means (the object store
/// client knows S3's answers, the engine does not).
struct StoreExchange: Sendable {
    enum Method: String, Sendable {
        case get = "GET", head = "HEAD", put = "PUT", post = "POST", delete = "DELETE"
    }

    enum Body: Sendable {
        case empty
        /// Sent from memory (small bodies: no `Expect: 100-continue` round trip).
        case bytes([UInt8])
        /// `length` bytes of the file open as `descriptor` from `offset`. The descriptor must
        /// stay open until the exchange is over.
        case file(descriptor: Int32, offset: Int, length: Int, path: String)
    }

    /// What libcurl signs with (`CURLOPT_AWS_SIGV4`, `CURLOPT_USERNAME`, `CURLOPT_PASSWORD`).
    struct Signing: Sendable {
        /// `aws:amz:REGION:SERVICE`.
        let scope: String
        let accessKey: String
        let secretKey: String
    }

    let method: Method
    /// The URL as signed and sent.
    let url: String
    var body = Body.empty
    /// Header lines, such as `x-amz-content-sha256: …` and `Content-Type: …`.
    var headers: [String] = []
    /// nil: sent unsigned (a credential source's own endpoint: STS's web identity, a container's, instance metadata).
    let signing: Signing?
    /// The CA bundle for an https store; nil: the system's.
    var caBundle: String?
    var connectTimeout: Double
    /// Abort an attempt under 1 KB/s for this many seconds.
    var timeout: Double
    var userAgent: String
    /// Most bytes of the response body kept.
    var responseLimit: Int
    /// One attempt, which the client's stop does not end: a multipart upload's abort, sent while
    /// the uploads are being cancelled.
    var once = false
    /// What an attempt's answer means; called on the engine thread.
    let judge: @Sendable (StoreAttempt) -> StoreVerdict
}

/// What one attempt of a `StoreExchange` got.
struct StoreAttempt {
    /// libcurl's result, and its error text when it is not `CURLE_OK`.
    let code: CURLcode
    let detail: String
    let answer: StoreAnswer
    /// A 2xx body went past `responseLimit` (the attempt was stopped there).
    let overflowed: Bool
}

/// The store's answer to an exchange: the final response's status, its body (up to the limit)
/// and the headers that S3 clients read.
struct StoreAnswer: Sendable {
    var status: Int
    var body: [UInt8]
    /// The Content-Length (a HEAD's object size).
    var length: Int?
    var etag: String?
    /// `x-amz-bucket-region`, which S3 sends with a wrong region's refusal.
    var region: String?
}

/// What the engine does after an attempt of a `StoreExchange`.
enum StoreVerdict {
    /// The exchange is over with this answer (a success, or a 404 that says "none").
    case answered
    /// Worth another attempt, as `RetryPolicy` allows.
    case retry(DownloadError)
    case failed(DownloadError)
}

/// Runs store exchanges: the engine.
protocol StoreTransport: Sendable {
    /// Runs `exchange` and waits for it: its answer, or the error it failed with. `stop` ends it
    /// (`cancelled`) unless it is `once`.
    func run(_ exchange: StoreExchange, stop: CancelSignal) throws(DownloadError) -> StoreAnswer
}
