import Glibc

/// The wall-clock time as a log line shows it: UTC, ISO 8601, to the second (`2026-12-03T18:00:10Z`),
/// so the lines of runs on machines in different zones sort and compare as they are.
enum Timestamp {
    static func utc(_ seconds: time_t) -> String {
        var time = seconds
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "?" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Now, as `utc` shows it.
    static func now() -> String {
        utc(time(nil))
    }
}
