import CCurl

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, which every current server sends, is read here;
/// the obsolete forms (RFC 850, asctime) go to libcurl's `curl_getdate`. That call costs a few
/// `sscanf`s and `getenv`s, and every response carries one to three dates: 2% of the CPU of
/// fetching tiny images.
enum HTTPDate {
    /// Seconds since the epoch (0 for a date before 1970, as libcurl answers), or nil when `text`
    /// is not a date.
    static func parse(_ text: String) -> Double? {
        if let seconds = parseFixdate(text) { return seconds }
        let seconds = curl_getdate(text, nil)
        return seconds < 0 ? nil : Double(seconds)
    }

    private static let weekdays: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let months: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` exactly, with fields in range and a year from 1970 to
    /// 9999; nil for anything else (which `curl_getdate` then reads as it always has).
    static func parseFixdate(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { bytes -> Double? in
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
                  bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
                  bytes[25] == 0x20, bytes[26] == UInt8(ascii: "G"), bytes[27] == UInt8(ascii: "M"),
                  bytes[28] == UInt8(ascii: "T") else { return nil }
            guard weekdays.contains(where: { matches($0, bytes, at: 0) }),
                  let monthIndex = months.firstIndex(where: { matches($0, bytes, at: 8) }),
                  let day = digits(bytes, at: 5, count: 2), let year = digits(bytes, at: 12, count: 4),
                  let hour = digits(bytes, at: 17, count: 2), let minute = digits(bytes, at: 20, count: 2),
                  let second = digits(bytes, at: 23, count: 2),
                  (1...31).contains(day), year >= 1970, hour <= 23, minute <= 59, second <= 60 else { return nil }
            let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
            return Double(((days * 24 + hour) * 60 + minute) * 60 + second)
        }
    }

    private static func matches(_ name: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        name[0] == bytes[offset] && name[1] == bytes[offset + 1] && name[2] == bytes[offset + 2]
    }

    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, count: Int) -> Int? {
        var value = 0
        for byte in bytes[offset..<offset + count] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    /// A day past the month's end counts on into the next month, as `curl_getdate` does.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
