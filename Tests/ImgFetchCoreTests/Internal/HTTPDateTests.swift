import CCurl
import XCTest
@testable import ImgFetchCore

final class HTTPDateTests: XCTestCase {
    private let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private func curlSeconds(_ text: String) -> Double? {
        let seconds = curl_getdate(text, nil)
        return seconds < 0 ? nil : Double(seconds)
    }

    private func fixdate(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int,
                         weekday: String = "Thu") -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(hour)):\(two(minute)):\(two(second)) GMT"
    }

    func testTheRFCExampleAndTheEpoch() {
        XCTAssertEqual(HTTPDate.parseFixdate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HTTPDate.parseFixdate("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
    }

    /// The fast path must give curl_getdate's answer for every IMF-fixdate it accepts.
    func testFixdatesAgreeWithCurl() {
        var generator = SystemRandomNumberGenerator()
        var dates: [String] = []
        for year in [1970, 1999, 2000, 2024, 2038, 2100, 2400, 9999] {
            for month in 1...12 {
                for day in [1, 28, 29, 30, 31] { dates.append(fixdate(year, month, day, 23, 59, 59)) }
            }
        }
        for _ in 0..<2000 {
            dates.append(fixdate(Int.random(in: 1970...2200, using: &generator), Int.random(in: 1...12, using: &generator),
                                 Int.random(in: 1...31, using: &generator), Int.random(in: 0...23, using: &generator),
                                 Int.random(in: 0...59, using: &generator), Int.random(in: 0...59, using: &generator),
                                 weekday: weekdays.randomElement(using: &generator)!))
        }
        for date in dates {
            guard let fast = HTTPDate.parseFixdate(date) else { continue }
            XCTAssertEqual(fast, curlSeconds(date), date)
        }
        XCTAssertNotNil(HTTPDate.parseFixdate(fixdate(2024, 2, 29, 12, 0, 0)))
    }

    func testOtherFormsGoToCurl() {
        for text in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 6 Nov 1994 08:49:37 GMT",
                     "sun, 06 nov 1994 08:49:37 gmt", "Sun, 06 Nov 1994 08:49:37 UTC"] {
            XCTAssertNil(HTTPDate.parseFixdate(text), text)
            XCTAssertEqual(HTTPDate.parse(text), curlSeconds(text), text)
        }
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
    }

    func testMalformedFixdatesAreNotDates() {
        for text in ["", "Sun, 06 Nov 1994 08:49:37 GM", "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 0x Nov 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
                     "Sun, 32 Nov 1994 08:49:37 GMT", "Wed, 31 Dec 1969 23:59:59 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\0",
                     "Sün, 06 Nov 1994 08:49:37 GMT"] {
            XCTAssertNil(HTTPDate.parseFixdate(text), text)
        }
        XCTAssertNil(HTTPDate.parse("not a date"))
        // Before 1970 curl_getdate answers 0, and still does through the fallback.
        XCTAssertEqual(HTTPDate.parse("Wed, 31 Dec 1969 23:59:59 GMT"), curlSeconds("Wed, 31 Dec 1969 23:59:59 GMT"))
    }
}
