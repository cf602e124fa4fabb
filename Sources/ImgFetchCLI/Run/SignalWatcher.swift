import Dispatch
import Glibc

/// Turns SIGINT and SIGTERM into a clean stop: the first one calls `onSignal`; a second SIGINT
/// exits at once (temp files are dot-files, so nothing partial is ever at a final path).
///
/// `@unchecked Sendable`: it only holds DispatchSources, which are thread-safe but not marked Sendable.
final class SignalWatcher: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]

    init(onSignal: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "imgfetch.signals")
        let seen = SignalCount()
        sources = [SIGINT, SIGTERM].map { number in
            // The dispatch source only sees the signal once the default action (terminate) is off.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if seen.increment() > 1 {
                    if number == SIGINT { _exit(128 + SIGINT) }
                    return
                }
                onSignal(number)
            }
            source.resume()
            return source
        }
    }
}

/// Signals seen so far; only touched on the watcher's serial queue.
private final class SignalCount: @unchecked Sendable {
    private var count = 0

    func increment() -> Int {
        count += 1
        return count
    }
}
