import ImgFetchCore

/// The small pieces of a progress line: counts, rate, ETA, bars, percent, spinner.
///
/// Plain text only; colors are added by `ProgressLineFormatter`, which knows whether they are allowed.
enum ProgressFields {
    /// `120/300`, or `120/300+` while the list is still being read and the total can grow.
    static func count(done: Int, total: Int, listComplete: Bool) -> String {
        "\(done)/\(total)\(listComplete ? "" : "+")"
    }

    /// `1.5 MiB/s`; a rate that is negative or not a number shows as `0 B/s`.
    static func rate(_ bytesPerSecond: Double) -> String {
        let rate = bytesPerSecond.isFinite && bytesPerSecond > 0 ? bytesPerSecond : 0
        return ByteCount.format(Int64(min(rate, Double(Int64.max / 2)))) + "/s"
    }

    /// `ETA 0:42`, `ETA 12:05`, `ETA 1:02:05`; `ETA --` when unknown, `ETA >99h` when absurd.
    static func eta(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "ETA --" }
        guard seconds < 100 * 3600 else { return "ETA >99h" }
        // Rounded up, so the estimate reaches 0:00 only when the work is done.
        let whole = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0
            ? "ETA \(hours):\(twoDigits(minutes)):\(twoDigits(secs))"
            : "ETA \(minutes):\(twoDigits(secs))"
    }

    /// How long something has lasted, in whole seconds (rounded down): `7s`, `59s`, `2m05s`, `1h02m`.
    static func age(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded(.down))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m\(twoDigits(whole % 60))s" }
        return "\(whole / 3600)h\(twoDigits(whole / 60 % 60))m"
    }

    /// `received / expected`, as byte counts.
    static func transferred(received: Int64, expected: Int64?) -> String {
        guard let expected else { return ByteCount.format(received) }
        return "\(ByteCount.format(received)) / \(ByteCount.format(expected))"
    }

    /// How far along, 0...1; a body with no expected bytes is complete.
    static func fraction(received: Int64, expected: Int64) -> Double {
        expected > 0 ? min(max(Double(received) / Double(expected), 0), 1) : 1
    }

    /// How far along the whole list is, 0...1.
    static func fraction(done: Int, total: Int) -> Double {
        total > 0 ? min(max(Double(done) / Double(total), 0), 1) : 0
    }

    /// ` 45%`, always four columns; rounded down so 100% means done.
    static func percent(_ fraction: Double) -> String {
        let value = Int((fraction * 100).rounded(.down))
        let text = "\(value)%"
        return String(repeating: " ", count: max(0, 4 - text.count)) + text
    }

    /// The inside of a bar of `width` columns, split into its filled part (`====>`) and its empty part.
    static func barParts(fraction: Double, width: Int) -> (filled: String, empty: String) {
        guard width > 0 else { return ("", "") }
        let fraction = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        let whole = Int((fraction * Double(width)).rounded(.down))
        if fraction <= 0 { return ("", String(repeating: " ", count: width)) }
        if whole >= width { return (String(repeating: "=", count: width), "") }
        return (String(repeating: "=", count: whole) + ">", String(repeating: " ", count: width - whole - 1))
    }

    static let spinnerFrames: [Character] = ["|", "/", "-", "\\"]

    /// The spinner glyph for a render count.
    static func spinner(_ phase: Int) -> Character {
        spinnerFrames[((phase % spinnerFrames.count) + spinnerFrames.count) % spinnerFrames.count]
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
