import CCurl
import XCTest
@testable import ImgFetchCore

final class RetryPolicyTests: XCTestCase {
    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110's example IMF-fixdate) in seconds since the epoch.
    private let rfcExampleDate = 784_111_777.0

    // MARK: - Transient failures

    func testTransientStatuses() {
        for status in [408, 429, 500, 502, 503, 504] {
            XCTAssertTrue(RetryPolicy.isTransient(status: status), "\(status)")
        }
    }

    func testPermanentStatuses() {
        for status in [200, 301, 304, 400, 401, 403, 404, 410, 501, 505] {
            XCTAssertFalse(RetryPolicy.isTransient(status: status), "\(status)")
        }
    }

    func testTransientCurlCodes() {
        for code in [CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR,
                     CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE] {
            XCTAssertTrue(RetryPolicy.isTransient(curlCode: code), "CURLcode \(code.rawValue)")
        }
    }

    func testPermanentCurlCodes() {
        for code in [CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
                     CURLE_UNSUPPORTED_PROTOCOL, CURLE_WRITE_ERROR, CURLE_TOO_MANY_REDIRECTS, CURLE_OK] {
            XCTAssertFalse(RetryPolicy.isTransient(curlCode: code), "CURLcode \(code.rawValue)")
        }
    }

    // MARK: - Backoff

    func testBackoffBoundsForTheFirstFiveAttempts() throws {
        let policy = RetryPolicy(maxRetries: 5)
        XCTAssertEqual(policy.baseDelay, 0.5)
        for attempt in 1...5 {
            let full = policy.baseDelay * Double(1 << (attempt - 1))
            let low = try XCTUnwrap(policy.delay(afterFailedAttempts: attempt, retryAfter: nil, now: 0, random: 0))
            let high = try XCTUnwrap(policy.delay(afterFailedAttempts: attempt, retryAfter: nil, now: 0, random: 1))
            XCTAssertEqual(low, full / 2, accuracy: 1e-9, "attempt \(attempt)")
            XCTAssertEqual(high, full, accuracy: 1e-9, "attempt \(attempt)")
        }
    }

    func testBackoffKnownValues() {
        let policy = RetryPolicy(maxRetries: 5)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: nil, now: 0, random: 0), 0.25)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: nil, now: 0, random: 1), 0.5)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 3, retryAfter: nil, now: 0, random: 0.5), 1.5)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 5, retryAfter: nil, now: 0, random: 1), 8)
    }

    func testBackoffNeverDropsBelowHalf() throws {
        let policy = RetryPolicy(maxRetries: 3)
        for random in stride(from: 0.0, to: 1.0, by: 0.125) {
            let delay = try XCTUnwrap(policy.delay(afterFailedAttempts: 2, retryAfter: nil, now: 0, random: random))
            XCTAssertGreaterThanOrEqual(delay, 0.5)
            XCTAssertLessThanOrEqual(delay, 1.0)
        }
    }

    func testBackoffIsCappedAtMaxDelay() throws {
        let policy = RetryPolicy(maxRetries: 40)
        for attempt in [7, 10, 30, 40] {
            let low = try XCTUnwrap(policy.delay(afterFailedAttempts: attempt, retryAfter: nil, now: 0, random: 0))
            let high = try XCTUnwrap(policy.delay(afterFailedAttempts: attempt, retryAfter: nil, now: 0, random: 1))
            XCTAssertEqual(low, policy.maxDelay / 2, accuracy: 1e-9, "attempt \(attempt)")
            XCTAssertEqual(high, policy.maxDelay, accuracy: 1e-9, "attempt \(attempt)")
        }
    }

    func testCustomBaseAndMaxDelay() {
        var policy = RetryPolicy(maxRetries: 4)
        policy.baseDelay = 1
        policy.maxDelay = 3
        XCTAssertEqual(policy.delay(afterFailedAttempts: 2, retryAfter: nil, now: 0, random: 1), 2)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 3, retryAfter: nil, now: 0, random: 1), 3)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 3, retryAfter: nil, now: 0, random: 0), 1.5)
    }

    func testNoDelayAfterTheLastRetry() {
        let policy = RetryPolicy(maxRetries: 2)
        XCTAssertNotNil(policy.delay(afterFailedAttempts: 1, retryAfter: nil, now: 0, random: 0))
        XCTAssertNotNil(policy.delay(afterFailedAttempts: 2, retryAfter: nil, now: 0, random: 0))
        XCTAssertNil(policy.delay(afterFailedAttempts: 3, retryAfter: nil, now: 0, random: 0))
        XCTAssertNil(policy.delay(afterFailedAttempts: 3, retryAfter: "1", now: 0, random: 0))
    }

    func testZeroRetriesNeverRetries() {
        XCTAssertNil(RetryPolicy(maxRetries: 0).delay(afterFailedAttempts: 1, retryAfter: nil, now: 0, random: 0))
        XCTAssertNil(RetryPolicy(maxRetries: 0).delay(afterFailedAttempts: 1, retryAfter: "5", now: 0, random: 0))
    }

    // MARK: - Retry-After

    func testRetryAfterSeconds() {
        let policy = RetryPolicy(maxRetries: 2)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "7", now: 0, random: 0), 7)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: " 3 ", now: 0, random: 1), 3)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "0", now: 0, random: 1), 0)
    }

    func testParseRetryAfterSeconds() {
        XCTAssertEqual(RetryPolicy.parseRetryAfter("120", now: 1_000), 120)
        XCTAssertEqual(RetryPolicy.parseRetryAfter("\t5", now: 0), 5)
    }

    func testRetryAfterHTTPDate() {
        let now = rfcExampleDate - 30
        XCTAssertEqual(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now), 30)
        let policy = RetryPolicy(maxRetries: 2)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: now, random: 0), 30)
    }

    func testRetryAfterHTTPDateInThePastMeansNoWait() {
        let policy = RetryPolicy(maxRetries: 2)
        let delay = policy.delay(afterFailedAttempts: 1, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: rfcExampleDate + 100, random: 1)
        XCTAssertEqual(delay, 0)
    }

    func testNegativeRetryAfterFallsBackToBackoff() {
        let policy = RetryPolicy(maxRetries: 2)
        XCTAssertNil(RetryPolicy.parseRetryAfter("-5", now: 0))
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "-5", now: 0, random: 1), 0.5)
    }

    func testGarbageRetryAfterFallsBackToBackoff() {
        let policy = RetryPolicy(maxRetries: 2)
        for garbage in ["soon", "", "later please", "tomorrow-ish"] {
            XCTAssertNil(RetryPolicy.parseRetryAfter(garbage, now: rfcExampleDate), garbage.debugDescription)
            XCTAssertEqual(policy.delay(afterFailedAttempts: 2, retryAfter: garbage, now: rfcExampleDate, random: 0), 0.5,
                           garbage.debugDescription)
        }
    }

    func testRetryAfterIsCapped() {
        let policy = RetryPolicy(maxRetries: 2)
        XCTAssertEqual(policy.retryAfterCap, 60)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "3600", now: 0, random: 0), 60)
        let dateAnHourAhead = policy.delay(afterFailedAttempts: 1, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT",
                                           now: rfcExampleDate - 3600, random: 0)
        XCTAssertEqual(dateAnHourAhead, 60)
    }

    func testCustomRetryAfterCap() {
        var policy = RetryPolicy(maxRetries: 1)
        policy.retryAfterCap = 5
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "10", now: 0, random: 0), 5)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 1, retryAfter: "4", now: 0, random: 0), 4)
    }

    func testRetryAfterOverridesBackoffEvenWhenShorter() {
        let policy = RetryPolicy(maxRetries: 10)
        XCTAssertEqual(policy.delay(afterFailedAttempts: 8, retryAfter: "1", now: 0, random: 1), 1)
    }
}
