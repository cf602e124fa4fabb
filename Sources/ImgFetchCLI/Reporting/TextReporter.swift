import ImgFetchCore
import Synchronization

/// The default reporter: one tab-separated result line per item on stdout, one error line per
/// failure on stderr, and the summary on stderr unless quiet.
///
/// Lines from many threads are serialized by `lock` so they never interleave.
final class TextReporter: ResultReporter {
    private let stdout: OutputSink
    private let stderr: OutputSink
    private let quiet: Bool
    private let lock = Mutex(())

    init(stdout: OutputSink, stderr: OutputSink, quiet: Bool) {
        self.stdout = stdout
        self.stderr = stderr
        self.quiet = quiet
    }

    func report(_ item: ItemReport) {
        let result = item.result
        let detail: String
        if let error = result.error {
            detail = error.kind == .invalidInput ? "\(item.position): \(error.message)" : error.message
        } else {
            detail = result.paths.joined(separator: " ")
        }
        let line = "\(result.status.rawValue)\t\(Self.clean(item.displayURL))\t\(Self.clean(detail))\n"
        let errorLine = result.error.map { Self.errorLine(item, $0, attempts: result.attempts) }
        lock.withLock { _ in
            stdout.write(line)
            if let errorLine { stderr.write(errorLine) }
        }
    }

    func finish(_ summary: RunSummary) {
        guard !quiet else { return }
        lock.withLock { _ in stderr.write(summary.line + "\n") }
    }

    private static func errorLine(_ item: ItemReport, _ error: DownloadError, attempts: Int) -> String {
        if error.kind == .invalidInput { return "imgfetch: \(item.position): \(error.message)\n" }
        let tries = attempts > 1 ? " (after \(attempts) attempts)" : ""
        return "imgfetch: failed \(clean(item.displayURL)): \(clean(error.message))\(tries)\n"
    }

    /// Tabs and line breaks in a field would break the one-line, tab-separated format.
    static func clean(_ text: String) -> String {
        // By scalar: "\r\n" is one Character and would slip past a Character comparison.
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }
}
