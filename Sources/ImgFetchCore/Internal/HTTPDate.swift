import CCurl

/// HTTP dates (IMF-fixdate, RFC 850 or asctime), parsed by libcurl's `curl_getdate`.
enum HTTPDate {
    /// Seconds since the epoch, or nil when `text` is not a date.
    static func parse(_ text: String) -> Double? {
        let seconds = curl_getdate(text, nil)
        return seconds < 0 ? nil : Double(seconds)
    }
}
