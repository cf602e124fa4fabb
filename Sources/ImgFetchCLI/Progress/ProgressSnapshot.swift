/// What the terminal progress renderer draws: one moment of a run, built by the CLI's progress model.
///
/// A plain value, so the model can build it under its own lock and hand it to the renderer on any thread.
struct ProgressSnapshot: Sendable, Equatable {
    /// Items finished: saved + skipped + failed.
    var done: Int = 0
    /// Items known so far; grows while `listComplete` is false.
    var total: Int = 0
    /// False while the list is still being read, so the total is only a lower bound.
    var listComplete: Bool = true
    var saved: Int = 0
    var skipped: Int = 0
    var failed: Int = 0
    /// Body bytes received so far.
    var bytes: Int64 = 0
    /// Current transfer rate, already smoothed by the caller.
    var bytesPerSecond: Double = 0
    /// Bytes over the seconds since the run started.
    var averageBytesPerSecond: Double = 0
    /// Seconds left; nil when unknown.
    var etaSeconds: Double?
    /// In-flight items, oldest first.
    var active: [ActiveTransfer] = []
    /// Hosts paused after a 429 or 503, the longest pause first.
    var pausedHosts: [PausedHost] = []
}

/// A host that asked to slow down, as the renderer shows it.
struct PausedHost: Sendable, Equatable {
    /// The origin (`https://cdn.example`); may hold any characters, the renderer makes them printable.
    var host: String
    /// Seconds until requests to it start again.
    var secondsLeft: Double
}

/// One in-flight transfer as the renderer shows it.
struct ActiveTransfer: Sendable, Equatable {
    /// What to call it on screen (usually the output name); may hold any characters, the renderer makes them printable.
    var name: String
    var received: Int64
    /// The body size when known (Content-Length); nil draws a spinner instead of a bar.
    var expected: Int64?
    /// Seconds since a byte last arrived, or since the attempt started when none has: a row says
    /// `waiting 7s` (no response yet) or `stalled 7s` (a body that stopped).
    var idleSeconds: Double = 0

    /// Idle this long, a transfer that has received bytes is marked stalled.
    static let stalledAfter = 5.0
    /// Idle this long with nothing received, a transfer is shown as waiting.
    static let waitingAfter = 1.0

    /// `waiting 7s` or `stalled 12s`, or nil for a transfer that moves.
    var note: String? {
        if received == 0 {
            return idleSeconds >= Self.waitingAfter ? "waiting " + ProgressFields.age(idleSeconds) : nil
        }
        return idleSeconds >= Self.stalledAfter ? "stalled " + ProgressFields.age(idleSeconds) : nil
    }
}
