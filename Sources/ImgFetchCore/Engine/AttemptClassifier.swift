import CCurl

/// What the engine does after one attempt of a transfer.
enum AttemptDecision {
    case fetched
    case redirect(ParsedURL)
    case retry(DownloadError)
    case failed(DownloadError)
}

/// Turns libcurl's result code and the response status of an attempt into a decision and a
/// one-line error that names what happened.
enum AttemptClassifier {
    static func classify(_ transfer: Transfer, code: CURLcode, handle: OpaquePointer,
                         configuration: DownloaderConfiguration) -> AttemptDecision {
        if let abortError = transfer.abortError { return .failed(abortError) }
        var status = transfer.status
        if status == 0 {
            var code = 0
            CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
            status = code
        }
        // A non-2xx response decides the outcome even when its discarded body was cut short.
        let answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && status >= 300)
        guard answered else { return classifyTransportError(code, transfer, configuration: configuration) }
        switch status {
        case 200..<300:
            return .fetched
        case 300..<400:
            return classifyRedirect(status, transfer, handle: handle, configuration: configuration)
        default:
            let error = DownloadError(.http, "HTTP \(status)")
            return RetryPolicy.isTransient(status: status) ? .retry(error) : .failed(error)
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
            return .failed(DownloadError(.redirect, "redirect to a \(scheme): URL refused (only http and https are followed)"))
        } catch {
            return .failed(DownloadError(.redirect, "redirect to an invalid URL: \(error)"))
        }
        if transfer.currentURL.scheme == "https" && target.scheme == "http" && !configuration.allowDowngrade {
            return .failed(DownloadError(.redirect, "redirect from https to http refused (use --allow-downgrade to follow it)"))
        }
        return .redirect(target)
    }

    private static func classifyTransportError(_ code: CURLcode, _ transfer: Transfer,
                                               configuration: DownloaderConfiguration) -> AttemptDecision {
        let detail = transfer.curlErrorText ?? String(cString: curl_easy_strerror(code))
        let error: DownloadError
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            if detail.contains("too slow") {
                let seconds = max(1, Int(configuration.timeout.rounded(.up)))
                error = DownloadError(.timeout, "timed out: under 1 KB/s for \(seconds) s (--timeout)")
            } else if detail.hasPrefix("Connection timed out") || detail.hasPrefix("Failed to connect") {
                error = DownloadError(.timeout, "connect timed out (--connect-timeout): \(detail)")
            } else if configuration.maxTime != nil {
                error = DownloadError(.timeout, "timed out (--max-time): \(detail)")
            } else {
                error = DownloadError(.timeout, "timed out: \(detail)")
            }
        case CURLE_FILESIZE_EXCEEDED:
            error = DownloadError(.tooLarge, "Content-Length exceeds --max-size (\(configuration.maxSize) bytes)")
        case CURLE_COULDNT_RESOLVE_HOST:
            error = DownloadError(.network, "could not resolve host \(transfer.currentURL.host)")
        case CURLE_COULDNT_CONNECT:
            error = DownloadError(.network, "could not connect: \(detail)")
        case CURLE_GOT_NOTHING:
            error = DownloadError(.network, "empty reply from server")
        case CURLE_PARTIAL_FILE:
            error = DownloadError(.network, "body shorter than announced (connection closed early): \(detail)")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            error = DownloadError(.network, "connection failed: \(detail)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            error = DownloadError(.tls, "TLS: \(detail)")
        default:
            error = DownloadError(.network, detail)
        }
        return RetryPolicy.isTransient(curlCode: code) ? .retry(error) : .failed(error)
    }
}
