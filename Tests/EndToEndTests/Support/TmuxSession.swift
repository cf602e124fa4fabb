import Foundation
import XCTest

/// A detached tmux session: a real terminal whose screen a test reads (`capture-pane`).
enum TmuxSession {
    /// Starts the session with posix_spawn, not Foundation's Process: the tmux server that the
    /// client forks would inherit Process's bookkeeping descriptor and make waitUntilExit hang.
    static func start(_ name: String, _ command: String, columns: Int = 100, rows: Int = 20) throws {
        let arguments = ["tmux", "new-session", "-d", "-s", name, "-x", String(columns), "-y", String(rows), command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, "tmux", nil, nil, &argv, environ) == 0 else { throw XCTSkip("cannot start tmux") }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    static func keys(_ name: String, _ keys: String...) throws {
        _ = try tmux(["send-keys", "-t", name] + keys)
    }

    static func screen(_ name: String) throws -> String {
        try tmux(["capture-pane", "-p", "-t", name])
    }

    /// The screen with everything that scrolled off it.
    static func screenAndScrollback(_ name: String) throws -> String {
        try tmux(["capture-pane", "-p", "-S", "-", "-t", name])
    }

    static func resize(_ name: String, columns: Int, rows: Int) throws {
        _ = try tmux(["resize-window", "-t", name, "-x", String(columns), "-y", String(rows)])
    }

    static func kill(_ name: String) {
        _ = try? tmux(["kill-session", "-t", name])
    }

    private static func tmux(_ arguments: [String]) throws -> String {
        String(decoding: try standardOutput(of: "/usr/bin/tmux", arguments), as: UTF8.self)
    }
}
