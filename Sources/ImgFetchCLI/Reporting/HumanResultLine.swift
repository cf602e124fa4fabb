import ImgFetchCore

/// The result line for a person at a terminal: a mark, the file (or the URL of a failure), the
/// image's dimensions and size, the error in red.
///
///     ✓ pics/cat.jpg  640×480  48.2 KiB
///     ✓ pics/cat.jpg  2268×1512 → 256×171  28.1 KiB (source 496.0 KiB)
///     · pics/dog.jpg  640×480  already there
///     ✗ https://example.com/gone.jpg  HTTP 404 Not Found
///
/// Only on a terminal: scripts read the tab-separated or JSON lines, which never change.
enum HumanResultLine {
    static func format(_ item: ItemReport, colors: Bool) -> String {
        let result = item.result
        func paint(_ text: String, _ color: String) -> String { colors ? color + text + SGR.reset : text }
        // Fields come from the network and the list: made printable one by one, before any color is added.
        let url = TerminalText.printable(item.displayURL)
        let line: String
        switch result.status {
        case .saved, .skipped:
            var fields = [result.paths.isEmpty ? url : TerminalText.printable(result.paths.joined(separator: ", "))]
            if let size = dimensions(result) { fields.append(size) }
            if result.status == .saved {
                if result.bytes > 0 || result.reusedBytes == 0 { fields.append(size(result)) }
                if result.cache == .fresh || result.cache == .revalidated { fields.append("from the cache") }
                if let format = result.format, !format.isDecodable { fields.append("\(format.displayName), not verified") }
                line = paint("✓", SGR.green) + " " + fields.joined(separator: "  ")
            } else if let reason = result.skipReason {
                fields.append(TerminalText.printable(reason))
                line = "· " + fields.joined(separator: "  ")
            } else {
                fields.append("already there")
                line = "· " + fields.joined(separator: "  ")
            }
        case .failed:
            let error = result.error
            let what = error?.kind == .invalidInput ? TerminalText.printable(item.position.description) : url
            let tries = result.attempts > 1 ? " (after \(result.attempts) attempts)" : result.fromEarlierRun ? " (in an earlier run)" : ""
            let message = TerminalText.printable(error?.message ?? "failed")
            line = paint("✗", SGR.red) + " " + what + "  " + paint(message + tries, SGR.red)
        case .cancelled:
            line = "✗ " + url + "  cancelled"
        }
        return line + "\n"
    }

    /// The size written, with the source's in brackets when they differ (converted pixels).
    private static func size(_ result: DownloadResult) -> String {
        guard let written = result.outputBytes, written != result.bytes, result.bytes > 0 else { return ByteCount.format(result.bytes) }
        return ByteCount.format(written) + " (source " + ByteCount.format(result.bytes) + ")"
    }

    /// `640×480`, or `640×480 → 256×192` when the written pixels differ from the source's.
    private static func dimensions(_ result: DownloadResult) -> String? {
        guard let image = result.image else { return nil }
        let source = "\(image.width)×\(image.height)"
        guard let width = image.outputWidth, let height = image.outputHeight,
              width != image.width || height != image.height else { return source }
        return source + " → \(width)×\(height)"
    }
}
