/// The protocol each response arrived over, by host, noted by the header callback for the
/// scheduler to read at the engine loop's next turn.
///
/// A host answers over HTTP/2 before its first transfer is complete: learning it from the status
/// line lets the scheduler admit more streams to it one transfer time sooner than waiting for a
/// finished transfer would. A response over HTTP/1.x (a plain-http host, or a server that turned
/// h2 off mid-run) says the host does not multiplex. Engine thread only.
final class HostProtocolLog {
    private var notes: [(host: String, multiplexes: Bool)] = []

    func note(host: String, version: HTTPVersion) {
        notes.append((host, version.multiplexes))
    }

    /// The notes since the last call, oldest first.
    func drain() -> [(host: String, multiplexes: Bool)] {
        guard !notes.isEmpty else { return [] }
        defer { notes.removeAll(keepingCapacity: true) }
        return notes
    }
}
