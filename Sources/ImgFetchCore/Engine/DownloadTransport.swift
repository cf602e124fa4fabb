/// Where transfers run: the libcurl `Engine`, or a mock in tests.
protocol DownloadTransport: Sendable {
    /// Starts `transfer` when its turn comes; its `onFinish` is called exactly once.
    func submit(_ transfer: Transfer)
    /// Stops `transfer` wherever it is; its `onFinish` then reports `cancelled` (unless it already finished).
    func cancel(_ transfer: Transfer)
    /// Cancels everything submitted and not finished.
    func cancelAll()
    /// The consumer is done with one finished transfer (backpressure: another may be admitted).
    func release()
    /// Finishes what was submitted, then stops.
    func close()
}

extension Engine: DownloadTransport {}
