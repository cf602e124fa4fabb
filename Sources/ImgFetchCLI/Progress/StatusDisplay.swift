import Dispatch
import FoundationEssentials
import Glibc
import ImgFetchCore

/// The stderr side of a run: error lines, progress, and the summary at the end.
protocol StatusDisplay: Sendable {
    /// An error or warning line (ending in a newline), shown without disturbing progress.
    func message(_ line: String)
    /// Stops the progress and shows the summary line, if any.
    func finish(summary: String?)
    /// Whether it shows bytes of transfers still running: without it, no progress events are asked for.
    var showsProgress: Bool { get }
    /// Whether it keeps a live area on screen, which other output to that terminal must go around.
    var drawsLiveArea: Bool { get }
}

/// Plain stderr lines, for logs and cron: no carriage returns, no escape sequences. With an
/// interval (`--progress plain`), a start line first (`startLine`: the time, version and
/// arguments), then a status line every `interval` seconds, each with the time in UTC, so a
/// log of many runs can be read later.
///
/// `@unchecked Sendable`: the timer is a DispatchSource, which is thread-safe but not marked Sendable.
final class PlainStatusDisplay: StatusDisplay, @unchecked Sendable {
    private let sink: TextSink
    private let timer: DispatchSourceTimer?

    init(sink: TextSink, model: ProgressModel, interval: Double?, startLine: String? = nil) {
        self.sink = sink
        guard let interval else {
            timer = nil
            return
        }
        if let startLine { sink.write("imgfetch: \(Timestamp.now()) \(startLine)\n") }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "imgfetch.status"))
        // The ETA's rates are sampled on every frame of a bar; a plain line every 10 s would give
        // them too few samples, so the model is sampled about every second (the interval divided
        // evenly) and every `ticksPerLine`-th sample prints a line. The count is the timer's
        // serial queue's alone.
        let ticksPerLine = max(1, Int(interval.rounded(.up)))
        var ticks = 0
        timer.schedule(deadline: .now() + interval / Double(ticksPerLine), repeating: interval / Double(ticksPerLine))
        timer.setEventHandler {
            let snapshot = model.snapshot(now: monotonicSeconds())
            ticks += 1
            guard ticks == ticksPerLine else { return }
            ticks = 0
            sink.write(Self.statusLine(snapshot, at: Timestamp.now()))
        }
        timer.resume()
        self.timer = timer
    }

    var showsProgress: Bool { timer != nil }
    var drawsLiveArea: Bool { false }

    func message(_ line: String) {
        sink.write(line)
    }

    func finish(summary: String?) {
        timer?.cancel()
        if let summary { sink.write(summary + "\n") }
    }

    /// `imgfetch: 2026-12-03T18:00:10Z 3/12 items: 2 saved, …; 3.0 MiB, 300.0 KiB/s on average, ETA 0:42`.
    static func statusLine(_ snapshot: ProgressSnapshot, at time: String) -> String {
        let total = "\(snapshot.total)\(snapshot.listComplete ? "" : "+")"
        var paused = ""
        if let longest = snapshot.pausedHosts.first {
            let hosts = snapshot.pausedHosts.count == 1 ? "1 host" : "\(snapshot.pausedHosts.count) hosts"
            paused = "; \(hosts) paused after 429/503 (longest \(Int(longest.secondsLeft.rounded(.up))) s more)"
        }
        return "imgfetch: \(time) \(snapshot.done)/\(total) items: \(snapshot.saved) saved, \(snapshot.skipped) skipped, "
            + "\(snapshot.failed) failed; \(ByteCount.format(snapshot.bytes)), \(ProgressFields.rate(snapshot.averageBytesPerSecond)) on average, "
            + ProgressFields.eta(snapshot.etaSeconds) + paused + "\n"
    }
}

/// The live bar on a terminal, redrawn at most 10 times a second by a timer; messages go above it.
///
/// `@unchecked Sendable`: the timer is a DispatchSource, which is thread-safe but not marked
/// Sendable.
final class BarStatusDisplay: StatusDisplay, @unchecked Sendable {
    private let renderer: TerminalProgressRenderer
    private let timer: DispatchSourceTimer

    /// - Parameter screenIsShared: asked a few times in the first `sharingCheckSeconds`, while a
    ///   pipeline's later stages start; when it says another program prints on the same terminal
    ///   (`imgfetch … | jq`), the live area is erased for good and only messages remain.
    ///   - waitsForTheList: URLs are typed at this terminal: no area is drawn over the typing until
    ///     the list ends (Ctrl-D); results and messages print as they come, as a shell's would.
    init(renderer: TerminalProgressRenderer, model: ProgressModel, screenIsShared: (@Sendable () -> Bool)? = nil,
         waitsForTheList: Bool = false) {
        self.renderer = renderer
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "imgfetch.progress"))
        let sharing = screenIsShared.map { SharingCheck(isShared: $0, started: monotonicSeconds()) }
        timer.schedule(deadline: .now(), repeating: 0.1)
        timer.setEventHandler {
            let now = monotonicSeconds()
            switch sharing?.verdict(at: now) {
            case .shared?:
                renderer.retire()  // once; later calls do nothing
            case .undecided?:
                // The shell may not have started the reader yet: no frame it could print over.
                break
            case .alone?, nil:
                let snapshot = model.snapshot(now: now)
                if waitsForTheList && !snapshot.listComplete { break }
                renderer.render(snapshot)
            }
        }
        timer.resume()
    }

    /// How long after the start a pipeline's reader is looked for.
    static let sharingCheckSeconds = 2.0
    /// How long the first frame waits while the reader is looked for.
    static let sharingGraceSeconds = 0.3

    var showsProgress: Bool { true }
    var drawsLiveArea: Bool { true }

    func message(_ line: String) {
        renderer.printAbove(line.hasSuffix("\n") ? String(line.dropLast()) : line)
    }

    func finish(summary: String?) {
        timer.cancel()
        renderer.finish(summary: summary)
    }

}

/// Whether another program prints on the live area's terminal, asked at 0, 0.1, 0.3, 0.7
/// and 1.5 s (each question scans `/proc`), then settled at 2 s.
///
/// `@unchecked Sendable`: only the display's timer handler calls it, on the timer's serial queue.
private final class SharingCheck: @unchecked Sendable {
    enum Verdict { case undecided, shared, alone }

    private let isShared: @Sendable () -> Bool
    private let started: Double
    private var nextCheck: Double
    private var interval = 0.1
    private var settled: Verdict?

    init(isShared: @escaping @Sendable () -> Bool, started: Double) {
        self.isShared = isShared
        self.started = started
        nextCheck = started
    }

    func verdict(at now: Double) -> Verdict {
        if let settled { return settled }
        if now >= nextCheck {
            if isShared() {
                settled = .shared
                return .shared
            }
            nextCheck = now + interval
            interval *= 2
        }
        if now - started >= BarStatusDisplay.sharingCheckSeconds {
            settled = .alone
            return .alone
        }
        return now - started < BarStatusDisplay.sharingGraceSeconds ? .undecided : .alone
    }
}
