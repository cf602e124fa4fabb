import Glibc

/// A terminal's size, and whether it rewraps lines when it gets narrower.
struct TerminalSize: Sendable, Equatable {
    var columns: Int
    /// 0 when unknown.
    var rows: Int

    /// The size of the terminal on `descriptor`; 80 columns and unknown rows when it cannot be read.
    static func of(_ descriptor: Int32) -> TerminalSize {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return TerminalSize(columns: 80, rows: 0) }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row))
    }

    /// Whether the terminal spreads a line that no longer fits over several rows after it got
    /// narrower (tmux, VTE, kitty, iTerm2, WezTerm, Konsole, Windows Terminal, foot, Alacritty,
    /// ghostty), as told by the variables each sets. xterm, the Linux console and screen cut
    /// such a line instead; for a terminal not known here, cutting is assumed: climbing over rows
    /// that do not exist would erase the result lines above the live area, while climbing too
    /// little at worst leaves part of one old frame on screen.
    static func rewrapsOnResize(_ environment: [String: String]) -> Bool {
        let markers = ["TMUX", "VTE_VERSION", "KITTY_WINDOW_ID", "KONSOLE_VERSION", "WT_SESSION", "ALACRITTY_WINDOW_ID",
                       "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR"]
        if markers.contains(where: { environment[$0].map { !$0.isEmpty } ?? false }) { return true }
        if let program = environment["TERM_PROGRAM"],
           ["iTerm.app", "WezTerm", "Apple_Terminal", "vscode", "ghostty", "tmux"].contains(program) { return true }
        return ["foot", "xterm-kitty", "alacritty", "xterm-ghostty", "tmux-256color", "tmux"].contains(environment["TERM"] ?? "")
    }
}
