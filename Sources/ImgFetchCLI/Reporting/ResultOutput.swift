/// Where and how a run's result lines go.
struct ResultOutput: Sendable {
    enum Format: Sendable, Equatable {
        /// `saved <TAB> URL <TAB> PATH`: the default contract for scripts.
        case tabSeparated
        /// `--jsonl`: one JSON object per item.
        case jsonl
        /// For a person at a terminal: `✓ pics/cat.jpg  640×480  48.2 KiB`.
        case human(colors: Bool)
    }

    var format: Format
    /// stdout, or the status display when stdout and stderr are one terminal, so result lines
    /// print above the live area instead of under its next frame.
    var sink: TextSink
    /// Whether failures also get a line on stderr. Not with `-q`, and not when their result line
    /// already shows on the same screen (a human line) or in the same file (`>> log 2>&1`).
    var errorsOnStderr: Bool

    init(format: Format, sink: TextSink, errorsOnStderr: Bool = true) {
        self.format = format
        self.sink = sink
        self.errorsOnStderr = errorsOnStderr
    }

    /// Picks the format and destination for the terminals at hand.
    ///
    /// - stdout off a terminal: tab-separated or JSON lines, byte for byte as always.
    /// - stdout on a terminal: human lines, unless `--jsonl` asked for JSON.
    /// - stdout and stderr one terminal with a live area: the lines go through the display.
    static func choose(jsonl: Bool, quiet: Bool = false, terminals: OutputTerminals, colors: Bool, stdout: TextSink,
                       display: StatusDisplay) -> ResultOutput {
        let format: Format = jsonl ? .jsonl : terminals.stdoutIsTerminal ? .human(colors: colors) : .tabSeparated
        let sink: TextSink = terminals.shared && display.drawsLiveArea ? DisplaySink(display: display) : stdout
        let human = if case .human = format { true } else { false }
        return ResultOutput(format: format, sink: sink, errorsOnStderr: !quiet && !(human && terminals.shared) && !terminals.sameFile)
    }
}

/// Writes result lines through a status display, above its live area.
private struct DisplaySink: TextSink {
    let display: StatusDisplay

    func write(_ text: String) {
        display.message(text)
    }
}
