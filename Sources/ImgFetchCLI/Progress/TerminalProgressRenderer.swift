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
    private let sink: any TextSink
    private let size: @Sendable () -> TerminalSize
    private let colors: Bool
    private let maxRows: Int
    private let rewrapsOnResize: Bool
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
    ///   - size: the terminal size, asked on every frame so a resize (SIGWINCH) shows at the next
    ///     frame without a signal handler; columns below 1 mean unknown and count as 80.
    ///   - colors: whether SGR color sequences may be written (the caller checks `NO_COLOR`, `TERM=dumb`).
    ///   - rewrapsOnResize: whether the terminal spreads old lines over more rows after it got
    ///     narrower (`TerminalSize.rewrapsOnResize`), which decides how far a redraw climbs.
    init(sink: any TextSink, size: @escaping @Sendable () -> TerminalSize, colors: Bool, maxRows: Int = 6,
         rewrapsOnResize: Bool = true) {
        self.sink = sink
        self.size = size
        self.colors = colors
        self.maxRows = max(maxRows, 0)
        self.rewrapsOnResize = rewrapsOnResize
    }

    /// A renderer for a terminal of known width and unknown height.
    convenience init(sink: any TextSink, columns: @escaping @Sendable () -> Int, colors: Bool, maxRows: Int = 6,
                     rewrapsOnResize: Bool = true) {
        self.init(sink: sink, size: { TerminalSize(columns: columns(), rows: 0) }, colors: colors, maxRows: maxRows,
                  rewrapsOnResize: rewrapsOnResize)
    }

    /// Redraws the live area, with the lines printed above it since the last frame. The caller
    /// throttles (at most 10 frames a second); every call advances the spinners.
    func render(_ snapshot: ProgressSnapshot) {
        state.withLock { state in
            guard !state.finished, !state.retired else { return }
            let size = currentSize()
            let phase = state.renderCount
            state.renderCount &+= 1
            guard !state.drawnLineWidths.isEmpty else {
                sink.write(draw(snapshot, size: size, spinnerPhase: phase, into: &state))
                return
            }
            guard state.pending.isEmpty else {
                sink.write(erase(&state, size: size) + takePending(&state)
                           + draw(snapshot, size: size, spinnerPhase: phase, into: &state))
                return
            }
            // Overwriting in place (rather than clearing first) never shows a blank area.
            let output = cursorToAreaTop(state, size: size)
                + draw(snapshot, size: size, spinnerPhase: phase, into: &state)
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
        let message = messageLine(line)
        state.withLock { state in
            guard !state.finished else { return }
            guard !state.drawnLineWidths.isEmpty else {
                sink.write(message)
                return
            }
            state.pending += message
            // A frame late, or a reader that stopped the terminal (Ctrl-S): do not hold much.
            if state.pending.utf8.count >= Self.maxPendingBytes, let snapshot = state.snapshot {
                let size = currentSize()
                // The same frame again: spinners advance only with render.
                sink.write(erase(&state, size: size) + takePending(&state)
                           + draw(snapshot, size: size, spinnerPhase: max(state.renderCount - 1, 0), into: &state))
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
            let output = erase(&state, size: currentSize()) + takePending(&state)
            if !output.isEmpty { sink.write(output) }
        }
    }

    /// Erases the live area and prints the summary line, if any; later calls do nothing.
    func finish(summary: String?) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            var output = erase(&state, size: currentSize()) + takePending(&state)
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

    private func currentSize() -> TerminalSize {
        var current = size()
        if current.columns < 1 { current.columns = 80 }
        return current
    }

    /// A message made printable, ending in exactly one newline.
    private func messageLine(_ text: String) -> String {
        var message = TerminalText.printableMessage(text, keepingColors: colors)
        if message.hasSuffix("\n") { message.removeLast() }
        return message + "\n"
    }

    /// The lines of `snapshot`, each ending in `ESC[K` and a newline; records them as drawn.
    /// The area never takes the whole screen: the overall line, the rows, and the cursor's line.
    private func draw(_ snapshot: ProgressSnapshot, size: TerminalSize, spinnerPhase: Int, into state: inout State) -> String {
        let rows = size.rows > 0 ? min(maxRows, max(size.rows - 2, 0)) : maxRows
        let formatter = ProgressLineFormatter(columns: size.columns, colors: colors, maxRows: rows, spinnerPhase: spinnerPhase)
        var lines = formatter.lines(for: snapshot)
        if size.rows > 0 { lines = Array(lines.prefix(max(size.rows - 1, 1))) }
        state.snapshot = snapshot
        state.drawnLineWidths = lines.map(TerminalText.visibleWidth)
        state.drawnColumns = size.columns
        return lines.map { $0 + TerminalControl.clearToEndOfLine + "\n" }.joined()
    }

    /// Clears the rows of the area and leaves the cursor at its top; nothing when no area is drawn.
    ///
    /// Row by row (`ESC[2K`), not with `ESC[J`: with the area at the top of the screen, `ESC[J`
    /// would clear the whole screen, and tmux (`scroll-on-clear`) and some terminals first copy
    /// such a screen into the scrollback, stale frame and all.
    /// The cursor's own line goes first: it should be empty, but the terminal echoes there what
    /// is typed during the run, such as the `^C` of an interrupt.
    private func erase(_ state: inout State, size: TerminalSize) -> String {
        guard !state.drawnLineWidths.isEmpty else { return "" }
        let rows = rowsToClimb(state, size: size)
        state.drawnLineWidths = []
        return "\r" + TerminalControl.clearLine + TerminalControl.cursorUp(rows)
            + Array(repeating: TerminalControl.clearLine, count: rows).joined(separator: "\n")
            + "\r" + TerminalControl.cursorUp(rows - 1)
    }

    private func cursorToAreaTop(_ state: State, size: TerminalSize) -> String {
        "\r" + TerminalControl.cursorUp(rowsToClimb(state, size: size))
    }

    /// The rows between the cursor and the top of the area: more than its lines after a
    /// narrowing on a terminal that rewraps, never more than the screen holds.
    private func rowsToClimb(_ state: State, size: TerminalSize) -> Int {
        let rows = rewrapsOnResize
            ? Self.rowsOccupied(lineWidths: state.drawnLineWidths, drawnColumns: state.drawnColumns, columns: size.columns)
            : state.drawnLineWidths.count
        return size.rows > 0 ? min(rows, size.rows - 1) : rows
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
