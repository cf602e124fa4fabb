import Synchronization

/// A handle on one request: `cancel()` withdraws this caller only.
///
/// Other callers of the same URL keep their transfer; when the last one cancels, the transfer
/// itself is cancelled. Cancelling twice, or after the result arrived, does nothing.
public final class DownloadToken: Sendable {
    public let url: ParsedURL
    private let cancelAction: (@Sendable () -> Void)?
    private let cancelled = Atomic<Bool>(false)

    init(url: ParsedURL, cancelAction: (@Sendable () -> Void)?) {
        self.url = url
        self.cancelAction = cancelAction
    }

    public func cancel() {
        guard !cancelled.exchange(true, ordering: .relaxed) else { return }
        cancelAction?()
    }
}
