import ImgFetchCore

/// The text forms of an item's outcome: the stdout line (tab-separated or JSON) and the stderr error line.
enum ResultLine {
    /// `saved|skipped|failed|cancelled <TAB> URL <TAB> PATH-or-error`, one line.
    static func tabSeparated(_ item: ItemReport) -> String {
        let result = item.result
        let detail: String
        if let error = result.error {
            detail = error.kind == .invalidInput ? "\(item.position): \(error.message)" : error.message
        } else if result.paths.isEmpty, let reason = result.skipReason {
            detail = reason
        } else {
            detail = result.paths.joined(separator: " ")
        }
        return "\(result.status.rawValue)\t\(clean(item.displayURL))\t\(clean(detail))\n"
    }

    /// The stderr line for a failed item, or nil when it did not fail. A failure an earlier run
    /// decided (a complete shard's row) says so, and how to try again; its result line does not,
    /// since a re-run gives the same rows.
    static func error(_ item: ItemReport) -> String? {
        guard let error = item.result.error, item.result.status == .failed else { return nil }
        let earlier = item.result.fromEarlierRun ? " (\(earlierFailure))" : ""
        if error.kind == .invalidInput { return clean("\(item.position): \(error.message)") + earlier + "\n" }
        let attempts = item.result.attempts
        let tries = attempts > 1 ? " (after \(attempts) attempts)" : ""
        return "failed \(clean(item.displayURL)): \(clean(error.message))\(tries)\(earlier)\n"
    }

    /// What the stderr line of a failure reported again from a complete shard adds.
    static let earlierFailure = "in an earlier run; --retry-failed fetches it again"

    /// Tabs, line breaks and other control characters in a field would break the one-line,
    /// tab-separated format (or a terminal): each becomes a space.
    static func clean(_ text: String) -> String {
        // Almost every field is clean: one pass over the bytes, no copy.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        // By scalar: "\r\n" is one Character and would slip past a Character comparison.
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
