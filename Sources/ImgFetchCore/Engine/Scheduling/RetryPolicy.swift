import CCurl

/// Decides which failures are retried and how long to wait before the next attempt.
///
/// Only transient failures are retried: timeouts, connection resets and refusals, a connection
/// that dropped mid-body, and HTTP 408, 429, 500, 502, 503 and 504. The wait grows exponentially
/// with jitter, or follows the server's `Retry-After` (seconds or an HTTP date), capped.
public struct RetryPolicy: Sendable {
    public var maxRetries: Int
    /// Wait before the first retry; doubles with each further attempt.
    public var baseDelay: Double = 0.5
    /// Longest computed backoff.
    public var maxDelay: Double = 30
    /// Longest wait a server's `Retry-After` can ask for.
    public var retryAfterCap: Double = 60

    public init(maxRetries: Int) {
        self.maxRetries = maxRetries
    }

    public static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    public static func isTransient(status: Int) -> Bool { transientStatuses.contains(status) }

    public static func isTransient(curlCode: CURLcode) -> Bool {
        switch curlCode {
        case CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR,
             CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            true
        default:
            false
        }
    }

    /// Seconds to wait before attempt `failedAttempts + 1`, or nil when no retry is left.
    /// - Parameters:
    ///   - failedAttempts: attempts made so far (1 after the first failure).
    ///   - retryAfter: the raw `Retry-After` header of the failed response, if any.
    ///   - now: the current time in seconds since the epoch, for HTTP dates.
    ///   - random: a number in 0..<1 for the jitter.
    public func delay(afterFailedAttempts failedAttempts: Int, retryAfter: String?, now: Double, random: Double) -> Double? {
        guard failedAttempts <= maxRetries else { return nil }
        if let retryAfter, let seconds = Self.parseRetryAfter(retryAfter, now: now) {
            return min(max(seconds, 0), retryAfterCap)
        }
        let backoff = min(baseDelay * Double(1 << min(failedAttempts - 1, 20)), maxDelay)
        // "Equal jitter": half the backoff is fixed, half random, so waits never collapse to zero.
        return backoff / 2 + backoff / 2 * random
    }

    /// Seconds from `now` that a `Retry-After` value asks for: delta-seconds or an HTTP date.
    public static func parseRetryAfter(_ value: String, now: Double) -> Double? {
        let trimmed = value.trimmingWhitespace
        if let seconds = Int(trimmed) { return seconds >= 0 ? Double(seconds) : nil }
        return HTTPDate.parse(trimmed).map { $0 - now }
    }
}
