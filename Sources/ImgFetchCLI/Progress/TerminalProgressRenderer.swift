import Synchronization

/// Draws a live progress area on a terminal (stderr): an overall line and up to `maxRows` rows
/// of active transfers, redrawn in place.
///
/// Between frames the cursor rests at the start of the line below the area. A redraw goes back
/// up (`\r ESC[nA`), overwrites each line and clears its rest (`ESC[K`), then clears whatever a
/// taller previous frame left below (`ESC[J`). Lines printed above the area (results, errors)
/// wait for the next frame, which erases the area first. Each frame, with its lines, and the
/// final erase is one `sink.write`, so nothing else can land in the middle of a frame.
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
        /// Lines printed above the area since the last frame, each ending in a newline.
        var pending = ""
        /// Set by `retire`: no more frames.
        var retired = false
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

    /// Redraws the live area, with the lines printed above it since the last frame. The caller
    /// throttles (at most 10 frames a second); every call advances the spinners.
    func render(_ snapshot: ProgressSnapshot) {
        state.withLock { state in
            guard !state.finished, !state.retired else { return }
            let width = currentColumns()
            let phase = state.renderCount
            state.renderCount &+= 1
            guard !state.drawnLineWidths.isEmpty else {
                sink.write(draw(snapshot, columns: width, spinnerPhase: phase, into: &state))
                return
            }
            guard state.pending.isEmpty else {
                sink.write(erase(&state, columns: width) + takePending(&state)
                           + draw(snapshot, columns: width, spinnerPhase: phase, into: &state))
                return
            }
            // Overwriting in place (rather than clearing first) never shows a blank area.
            let output = Self.cursorToAreaTop(state, columns: width)
                + draw(snapshot, columns: width, spinnerPhase: phase, into: &state)
                + TerminalControl.clearToEndOfScreen
            sink.write(output)
        }
    }

    /// Prints a line (a result, a warning or an error) above the live area.
    ///
    /// The line stays on screen when the area moves on. Control characters in it are shown in
    /// caret notation, and its colors are dropped unless colors are allowed. While the area is
    /// on screen, lines wait for the next frame, which erases the area, prints them and redraws
    /// it in one write: a run that finishes thousands of items a second redraws ten times a
    /// second, not once per item, and every moment of the screen shows the area.
    func printAbove(_ line: String) {
        state.withLock { state in
            guard !state.finished else { return }
            guard !state.drawnLineWidths.isEmpty else {
                sink.write(messageLine(line))
                return
            }
            state.pending += messageLine(line)
            // A frame late, or a reader that stopped the terminal (Ctrl-S): do not hold much.
            if state.pending.utf8.count >= Self.maxPendingBytes, let snapshot = state.snapshot {
                let width = currentColumns()
                // The same frame again: spinners advance only with render.
                sink.write(erase(&state, columns: width) + takePending(&state)
                           + draw(snapshot, columns: width, spinnerPhase: max(state.renderCount - 1, 0), into: &state))
            }
        }
    }

    /// Lines held for the next frame at most; beyond this they are written at once.
    static let maxPendingBytes = 64 * 1024

    /// Erases the live area for good: from now on lines are printed as they come, and frames are
    /// ignored. For when another program writes to the same terminal.
    func retire() {
        state.withLock { state in
            guard !state.finished, !state.retired else { return }
            state.retired = true
            let output = erase(&state, columns: currentColumns()) + takePending(&state)
            if !output.isEmpty { sink.write(output) }
        }
    }

    /// Erases the live area and prints the summary line, if any; later calls do nothing.
    func finish(summary: String?) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            var output = erase(&state, columns: currentColumns()) + takePending(&state)
            if let summary {
                output += messageLine(summary)
            }
            if !output.isEmpty { sink.write(output) }
        }
    }

    // MARK: - Frames

    private func takePending(_ state: inout State) -> String {
        defer { state.pending = "" }
        return state.pending
    }

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

    /// Clears the rows of the area and leaves the cursor at its top; nothing when no area is drawn.
    ///
    /// Row by row (`ESC[2K`), not with `ESC[J`: with the area at the top of the screen, `ESC[J`
    /// would clear the whole screen, and tmux (`scroll-on-clear`) and some terminals first copy
    /// such a screen into the scrollback, stale frame and all.
    private func erase(_ state: inout State, columns: Int) -> String {
        guard !state.drawnLineWidths.isEmpty else { return "" }
        let rows = Self.rowsOccupied(lineWidths: state.drawnLineWidths, drawnColumns: state.drawnColumns, columns: columns)
        state.drawnLineWidths = []
        return "\r" + TerminalControl.cursorUp(rows)
            + Array(repeating: TerminalControl.clearLine, count: rows).joined(separator: "\n")
            + "\r" + TerminalControl.cursorUp(rows - 1)
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
    static let clearLine = "\u{1B}[2K"

    static func cursorUp(_ rows: Int) -> String {
        rows > 0 ? "\u{1B}[\(rows)A" : ""
    }
}
