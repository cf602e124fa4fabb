@testable import ImgFetchCore
import XCTest

/// RFC 9111 §4.2: freshness lifetime, age and the directives that override them.
final class CacheFreshnessTests: XCTestCase {
    private let date = "Sun, 29 Nov 2026 12:00:00 GMT"
    private let dateSeconds = 1_795_953_600.0

    func testDateParsesAsAnHTTPDate() {
        XCTAssertEqual(HTTPDate.parse(date), dateSeconds)
        XCTAssertEqual(HTTPDate.parse("Sunday, 29-Nov-26 12:00:00 GMT"), dateSeconds, "RFC 850")
        XCTAssertEqual(HTTPDate.parse("Sun Nov 29 12:00:00 2026"), dateSeconds, "asctime")
        XCTAssertNil(HTTPDate.parse("0"))
    }

    func testMaxAgeWinsOverExpires() {
        let headers = ResponseCacheHeaders(date: date, cacheControl: "public, max-age=300", expires: "Sun, 29 Nov 2026 13:00:00 GMT")
        let freshness = CacheFreshness(headers: headers, requestTime: dateSeconds, responseTime: dateSeconds)
        XCTAssertEqual(freshness.lifetime, 300)
        XCTAssertTrue(freshness.isFresh(now: dateSeconds + 299))
        XCTAssertFalse(freshness.isFresh(now: dateSeconds + 300))
    }

    func testExpiresCountsFromTheDateHeader() {
        let headers = ResponseCacheHeaders(date: date, expires: "Sun, 29 Nov 2026 13:00:00 GMT")
        XCTAssertEqual(CacheFreshness(headers: headers, requestTime: dateSeconds, responseTime: dateSeconds + 5).lifetime, 3600)
    }

    func testAnInvalidExpiresMeansAlreadyExpired() {
        let headers = ResponseCacheHeaders(lastModified: "Sun, 01 Nov 2026 12:00:00 GMT", date: date, expires: "0")
        XCTAssertEqual(CacheFreshness(headers: headers, requestTime: dateSeconds, responseTime: dateSeconds).lifetime, 0)
    }

    func testHeuristicIsATenthOfTheTimeSinceModificationCappedAtAWeek() {
        let tenDays = ResponseCacheHeaders(lastModified: "Thu, 19 Nov 2026 12:00:00 GMT", date: date)
        XCTAssertEqual(CacheFreshness(headers: tenDays, requestTime: dateSeconds, responseTime: dateSeconds).lifetime, 86400)
        let years = ResponseCacheHeaders(lastModified: "Sat, 29 Nov 2014 12:00:00 GMT", date: date)
        XCTAssertEqual(CacheFreshness(headers: years, requestTime: dateSeconds, responseTime: dateSeconds).lifetime, 7 * 86400)
        XCTAssertEqual(CacheFreshness(headers: ResponseCacheHeaders(date: date), requestTime: 0, responseTime: dateSeconds).lifetime, 0)
    }

    func testAgeCountsTheAgeHeaderTheDelayAndTheTimeSinceArrival() {
        let headers = ResponseCacheHeaders(date: date, age: "100", cacheControl: "max-age=600")
        let freshness = CacheFreshness(headers: headers, requestTime: dateSeconds, responseTime: dateSeconds + 2)
        XCTAssertEqual(freshness.initialAge, 102, "Age + response delay beats the apparent age of 2 s")
        XCTAssertEqual(freshness.currentAge(now: dateSeconds + 12), 112)
        XCTAssertTrue(freshness.isFresh(now: dateSeconds + 489))
        XCTAssertFalse(freshness.isFresh(now: dateSeconds + 500))
    }

    func testDirectives() {
        let directives = CacheDirectives(cacheControl: "Max-Age=\"60\", no-cache=\"Set-Cookie\", MUST-REVALIDATE, no-store")
        XCTAssertEqual(directives.maxAge, 60)
        XCTAssertTrue(directives.noCache)
        XCTAssertTrue(directives.mustRevalidate)
        XCTAssertTrue(directives.noStore)
        XCTAssertEqual(CacheDirectives(cacheControl: "max-age=abc").maxAge, 0, "an invalid max-age is stale")
        XCTAssertEqual(CacheDirectives(cacheControl: "max-age=5, max-age=500").maxAge, 5, "the first one counts")
        XCTAssertTrue(CacheDirectives(cacheControl: nil, pragma: "no-cache").noCache)
        XCTAssertFalse(CacheDirectives(cacheControl: "max-age=5", pragma: "no-cache").noCache, "Pragma counts only without Cache-Control")
        XCTAssertEqual(CacheDirectives(cacheControl: "=, =5, max-age=60,=, ,"), CacheDirectives(cacheControl: "max-age=60"),
                       "empty names are skipped, never a crash")
    }

    func testA304UpdatesTheFieldsItCarries() {
        let stored = ResponseCacheHeaders(etag: "\"a\"", lastModified: "LM", date: "D1", age: "500", cacheControl: "max-age=5")
        let updated = stored.updated(with: ResponseCacheHeaders(etag: "\"b\"", date: "D2"))
        XCTAssertEqual(updated, ResponseCacheHeaders(etag: "\"b\"", lastModified: "LM", date: "D2", cacheControl: "max-age=5"),
                       "the old Age described the old response")
        XCTAssertEqual(updated.validators, ["If-None-Match: \"b\"", "If-Modified-Since: LM"])
    }
}
