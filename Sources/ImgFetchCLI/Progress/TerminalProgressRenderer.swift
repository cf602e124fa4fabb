import Synchronization

/// Draws a live progress area on a terminal (stderr): an overall line and up to `maxRows` rows
/// of active transfers, redrawn in place.
///
/// Between frames the cursor rests at the start of the line below the area. A redraw goes back
/// up (`\r ESC[nA`), overwrites each line and clears its rest (`ESC[K`), then clears whatever a
/// taller previous frame left below (`ESC[J`). Each frame, message and the final erase is one
/// `sink.write`, so nothing else can land in the middle of a frame.
///
/// Calls may come from any thread: `state` (a `Mutex`) serializes them and is held while
/// writing, so frames reach the sink in the order their state changed.
final class TerminalProgressRenderer: Sendable {
    private let sink: any OutputSink
    private let columns: @Sendable () -> Int
    private let colors: Bool
    private let maxRows: Int
    private let state = Mutex(State())

    private struct State {
        /// The snapshot on screen, redrawn after a message.
        var snapshot: ProgressSnapshot?
        /// Visible widths of the lines on screen; empty when nothing is drawn.
        var drawnLineWidths: [Int] = []
        /// The terminal width those lines were laid out for.
        var drawnColumns = 0
        /// Frames rendered so far; a frame's spinners show glyph number `renderCount` at the time.
        var renderCount = 0
        var finished = false
    }

    /// - Parameters:
    ///   - columns: the terminal width, asked on every frame so a resize (SIGWINCH) shows at the
    ///     next frame without a signal handler; a value below 1 means unknown and counts as 80.
    ///   - colors: whether SGR color sequences may be written (the caller checks `NO_COLOR`, `TERM=dumb`).
    init(sink: any OutputSink, columns: @escaping @Sendable () -> Int, colors: Bool, maxRows: Int = 6) {
        self.sink = sink
        self.columns = columns
        self.colors = colors
        self.maxRows = max(maxRows, 0)
    }

    /// Redraws the live area. The caller throttles (at most 10 frames a second); every call advances the spinners.
    func render(_ snapshot: ProgressSnapshot) {
        state.withLock { state in
            guard !state.finished else { return }
            let width = currentColumns()
            let phase = state.renderCount
            state.renderCount &+= 1
            guard !state.drawnLineWidths.isEmpty else {
                sink.write(draw(snapshot, columns: width, spinnerPhase: phase, into: &state))
                return
            }
            // Overwriting in place (rather than clearing first) never shows a blank area.
            let output = Self.cursorToAreaTop(state, columns: width)
                + draw(snapshot, columns: width, spinnerPhase: phase, into: &state)
                + TerminalControl.clearToEndOfScreen
            sink.write(output)
        }
    }

    /// Prints a warning or error line above the live area and redraws the area below it.
    ///
    /// The line stays on screen when the area moves on. Control characters in it are shown in
    /// caret notation, and its colors are dropped unless colors are allowed.
    func printAbove(_ line: String) {
        state.withLock { state in
            guard !state.finished else { return }
            let width = currentColumns()
            var output = erase(&state, columns: width)
            output += messageLine(line)
            if let snapshot = state.snapshot {
                // The same frame again: spinners advance only with render.
                output += draw(snapshot, columns: width, spinnerPhase: max(state.renderCount - 1, 0), into: &state)
            }
            sink.write(output)
        }
    }

    /// Erases the live area and prints the summary line, if any; later calls do nothing.
    func finish(summary: String?) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            var output = erase(&state, columns: currentColumns())
            if let summary {
                output += messageLine(summary)
            }
            if !output.isEmpty { sink.write(output) }
        }
    }

    // MARK: - Frames

    private func currentColumns() -> Int {
        let width = columns()
        return width >= 1 ? width : 80
    }

    /// A message made printable, ending in exactly one newline.
    private func messageLine(_ text: String) -> String {
        var message = TerminalText.printableMessage(text, keepingColors: colors)
        if message.hasSuffix("\n") { message.removeLast() }
        return message + "\n"
    }

    /// The lines of `snapshot`, each ending in `ESC[K` and a newline; records them as drawn.
    private func draw(_ snapshot: ProgressSnapshot, columns: Int, spinnerPhase: Int, into state: inout State) -> String {
        let formatter = ProgressLineFormatter(columns: columns, colors: colors, maxRows: maxRows, spinnerPhase: spinnerPhase)
        let lines = formatter.lines(for: snapshot)
        state.snapshot = snapshot
        state.drawnLineWidths = lines.map(TerminalText.visibleWidth)
        state.drawnColumns = columns
        return lines.map { $0 + TerminalControl.clearToEndOfLine + "\n" }.joined()
    }

    /// Moves to the top of the area and clears it and everything below; nothing when no area is drawn.
    private func erase(_ state: inout State, columns: Int) -> String {
        guard !state.drawnLineWidths.isEmpty else { return "" }
        let output = Self.cursorToAreaTop(state, columns: columns) + TerminalControl.clearToEndOfScreen
        state.drawnLineWidths = []
        return output
    }

    private static func cursorToAreaTop(_ state: State, columns: Int) -> String {
        let rows = rowsOccupied(lineWidths: state.drawnLineWidths, drawnColumns: state.drawnColumns, columns: columns)
        return "\r" + TerminalControl.cursorUp(rows)
    }

    /// How many screen rows the drawn lines take now. After the terminal got narrower, terminals
    /// that rewrap (VTE, iTerm2, kitty, tmux) spread a line over several rows, and the redraw must
    /// climb over all of them or it leaves the top of the old frame behind.
    static func rowsOccupied(lineWidths: [Int], drawnColumns: Int, columns: Int) -> Int {
        guard columns < drawnColumns, columns > 0 else { return lineWidths.count }
        return lineWidths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
    }
}

/// The cursor and erase sequences of the redraw (ECMA-48).
enum TerminalControl {
    static let clearToEndOfLine = "\u{1B}[K"
    static let clearToEndOfScreen = "\u{1B}[J"

    static func cursorUp(_ rows: Int) -> String {
        rows > 0 ? "\u{1B}[\(rows)A" : ""
    }
}
