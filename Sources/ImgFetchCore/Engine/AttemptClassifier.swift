import CCurl
import FoundationEssentials
import Glibc

/// What the engine does after one attempt of a transfer.
enum AttemptDecision {
    case fetched
    /// A store exchange's attempt that its judge took as the answer.
    case answered
    /// 304 to a conditional request: the cached body is current.
    case notModified
    case redirect(ParsedURL)
    case retry(DownloadError)
    case failed(DownloadError)
}

/// Turns libcurl's result code and the response status of an attempt into a decision and a
/// one-line error that names what happened.
enum AttemptClassifier {
    static func classify(_ transfer: Transfer, code: CURLcode, handle: OpaquePointer,
                         configuration: DownloaderConfiguration) -> AttemptDecision {
        if let mismatch = transfer.rangeMismatch { return .retry(mismatch) }
        if let abortError = transfer.abortError { return .failed(abortError) }
        if transfer.bodyTruncated && code == CURLE_WRITE_ERROR { return .fetched }
        var status = transfer.response.status
        if status == 0 {
            var code = 0
            CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
            status = code
        }
        // A non-2xx response decides the outcome even when its discarded body was cut short.
        let answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && status >= 300)
        if code == CURLE_COULDNT_CONNECT, transfer.openedConnections == 0, let refusal = transfer.blockedConnection {
            return .failed(DownloadError(.blocked, refusal))
        }
        guard answered else { return classifyTransportError(code, transfer, handle: handle, configuration: configuration) }
        switch status {
        case 200..<300:
            return .fetched
        case 304 where transfer.isConditional:
            return .notModified
        case 416 where transfer.sentRange:
            // The rest cannot be had (the image shrank?): the next attempt asks for all of it.
            transfer.resumePoint = nil
            return .retry(DownloadError(.http, "HTTP 416: the server cannot send the rest of the body it cut off; a retry asks for all of it"))
        case 300..<400:
            return classifyRedirect(status, transfer, handle: handle, configuration: configuration)
        default:
            let error = DownloadError(.http, "HTTP \(status)")
            return RetryPolicy.isTransient(status: status) ? .retry(error) : .failed(error)
        }
    }

    /// What the attempt tells of its host, for `HostGates`: served, asked to slow down, answered
    /// otherwise, or never reached (no request went out: refused, DNS, TLS, connect timeout).
    static func hostAnswer(_ decision: AttemptDecision, _ transfer: Transfer, handle: OpaquePointer, now: Double,
                           retryAfterCap: Double) -> HostGates.Answer {
        switch decision {
        case .fetched, .notModified, .answered:
            return .served
        case .redirect:
            return .answered
        case .retry(let error), .failed(let error):
            let status = transfer.response.statusIfAny ?? 0
            if status == 429 || status == 503 {
                let retryAfter = transfer.response.retryAfter.flatMap { RetryPolicy.parseRetryAfter($0, now: now) }
                return .slowDown(status: status, retryAfter: retryAfter.map { min(max($0, 0), retryAfterCap) })
            }
            var requestSent: curl_off_t = 0
            CCurl_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &requestSent)
            // A refused address is the policy's doing, not the host's.
            let unreached = status == 0 && requestSent == 0 && transfer.abortError == nil && error.kind != .blocked
            return unreached ? .connectionFailed(error) : .answered
        }
    }

    private static func classifyRedirect(_ status: Int, _ transfer: Transfer, handle: OpaquePointer,
                                         configuration: DownloaderConfiguration) -> AttemptDecision {
        var location: UnsafeMutablePointer<CChar>?
        CCurl_easy_getinfo_string(handle, CURLINFO_REDIRECT_URL, &location)
        guard let location else {
            return .failed(DownloadError(.http, "HTTP \(status) without a usable Location header"))
        }
        let targetText = String(cString: location)
        guard transfer.redirects < EasyHandleOptions.maxRedirects else {
            return .failed(DownloadError(.redirect, "too many redirects (more than \(EasyHandleOptions.maxRedirects))"))
        }
        let target: ParsedURL
        do {
            target = try ParsedURL(targetText)
        } catch .unsupportedScheme(let scheme) {
            return .failed(DownloadError(.redirect, "redirect to \(scheme): refused (only http and https are followed)"))
        } catch {
            return .failed(DownloadError(.redirect, "redirect to an invalid URL: \(error)"))
        }
        if transfer.currentURL.scheme == "https" && target.scheme == "http" && !configuration.allowDowngrade {
            return .failed(DownloadError(.redirect, "redirect from https to http refused (use --allow-downgrade to follow it)"))
        }
        return .redirect(target)
    }

    private static func classifyTransportError(_ code: CURLcode, _ transfer: Transfer, handle: OpaquePointer,
                                               configuration: DownloaderConfiguration) -> AttemptDecision {
        var osErrno = 0
        CCurl_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osErrno)
        let error = transportError(code, transfer, osErrno: Int32(truncatingIfNeeded: osErrno), configuration: configuration)
        return RetryPolicy.isTransient(curlCode: code) ? .retry(error) : .failed(error)
    }

    private static func isReset(_ detail: String, _ osErrno: Int32) -> Bool {
        osErrno == ECONNRESET || detail.contains("Connection reset by peer")
    }

    private static func transportError(_ code: CURLcode, _ transfer: Transfer, osErrno: Int32,
                                       configuration: DownloaderConfiguration) -> DownloadError {
        let detail = transfer.curlErrorText ?? String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return timeoutError(detail, transfer, configuration: configuration)
        case CURLE_FILESIZE_EXCEEDED:
            return DownloadError(.tooLarge, "Content-Length exceeds --max-size (\(configuration.maxSize) bytes)")
        case CURLE_COULDNT_RESOLVE_HOST:
            return DownloadError(.dns, "could not resolve host \(transfer.currentURL.host)")
        case CURLE_COULDNT_CONNECT:
            if osErrno == ECONNREFUSED {
                let url = transfer.currentURL
                return DownloadError(.network, "could not connect to \(url.host) port \(url.port): connection refused")
            }
            return DownloadError(.network, "could not connect: \(detail)")
        case CURLE_GOT_NOTHING:
            return DownloadError(.network, "empty reply from server")
        case CURLE_PARTIAL_FILE where transfer.response.isChunked:
            return DownloadError(.network, "chunked body cut off: the connection closed before the last chunk")
        case CURLE_PARTIAL_FILE:
            return DownloadError(.network, "body shorter than announced (connection closed early): \(detail)")
        case CURLE_HTTP2_STREAM:
            return DownloadError(.network, "HTTP/2 stream failed: \(detail)")
        case CURLE_HTTP2:
            return DownloadError(.network, "HTTP/2 connection failed: \(detail)")
        case CURLE_RECV_ERROR where isReset(detail, osErrno), CURLE_SEND_ERROR where isReset(detail, osErrno):
            // One message however it came: libcurl words it "Recv failure: Connection reset by
            // peer" or "OpenSSL SSL_read: Connection reset by peer, errno 104" (its text, in the C
            // locale imgfetch runs in; CURLINFO_OS_ERRNO is set for connects only).
            return DownloadError(.network, "connection reset by the server")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return DownloadError(.network, "connection failed: \(detail)")
        case CURLE_UNSUPPORTED_PROTOCOL where detail.contains("HTTP/0.9"):
            // No status line at all: libcurl takes the bytes for an HTTP/0.9 reply and refuses them.
            return DownloadError(.network, "invalid HTTP response: no valid status line")
        case CURLE_UNSUPPORTED_PROTOCOL where transfer.response.status == 0, CURLE_WEIRD_SERVER_REPLY where transfer.response.status == 0:
            // libcurl refuses the status line ("Unsupported HTTP version", "Unsupported response code")
            // before the header callback sees it, so no status was recorded.
            return DownloadError(.network, "invalid HTTP response: malformed status line (\(detail))")
        case CURLE_WEIRD_SERVER_REPLY where detail.hasPrefix("Invalid Content-Length"):
            return ResponseHead.invalidContentLength
        case CURLE_WEIRD_SERVER_REPLY:
            return DownloadError(.network, "invalid HTTP response: \(detail)")
        case CURLE_OUT_OF_MEMORY where !transfer.response.isComplete:
            // libcurl refuses a header line over CURL_MAX_HTTP_HEADER (100 KiB) with this code.
            return DownloadError(.network, "response headers too large (libcurl accepts at most 100 KiB per header line)")
        case CURLE_PEER_FAILED_VERIFICATION:
            return DownloadError(.tls, "TLS certificate not trusted: \(detail) (use --cacert FILE to trust it, or --insecure)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            return DownloadError(.tls, "TLS: \(detail)")
        default:
            return DownloadError(.network, detail)
        }
    }

    static func timeoutError(_ detail: String, _ transfer: Transfer,
                                     configuration: DownloaderConfiguration) -> DownloadError {
        let seconds = max(1, Int(configuration.timeout.rounded(.up)))
        if detail.hasPrefix("Resolving timed out") || detail.hasPrefix("Could not resolve host") {
            // The resolver did not answer within --connect-timeout: a DNS failure that a retry may cure.
            return DownloadError(.dns, "could not resolve host \(transfer.currentURL.host): \(detail)")
        }
        if detail.contains("too slow") && transfer.response.status == 0 {
            // Connected, but no response header arrived: a server that accepts and never answers.
            return DownloadError(.timeout, "timed out: no response for \(seconds) s (--timeout)")
        } else if detail.contains("too slow") {
            return DownloadError(.timeout, "timed out: under 1 KB/s for \(seconds) s (--timeout)")
        } else if detail.hasPrefix("Connection timed out") || detail.hasPrefix("Failed to connect") {
            return DownloadError(.timeout, "connect timed out (--connect-timeout): \(detail)")
        } else if configuration.maxTime != nil {
            return DownloadError(.timeout, "timed out (--max-time): \(detail)")
        } else {
            return DownloadError(.timeout, "timed out: \(detail)")
        }
    }
}

/// Turns an attempt of a store exchange into the engine's decision, as the exchange's judge says.
enum StoreAttemptClassifier {
    static func classify(_ transfer: Transfer, exchange: StoreExchange, code: CURLcode) -> AttemptDecision {
        // A body that could not be read: nothing the store said matters.
        if let abortError = transfer.abortError { return .failed(abortError) }
        let detail = code == CURLE_OK ? "" : transfer.curlErrorText ?? String(cString: curl_easy_strerror(code))
        let attempt = StoreAttempt(code: code, detail: detail, answer: transfer.storeAnswer(), overflowed: transfer.storeOverflowed)
        switch exchange.judge(attempt) {
        case .answered: return .answered
        case .retry(let error): return .retry(error)
        case .failed(let error): return .failed(error)
        }
    }
}
