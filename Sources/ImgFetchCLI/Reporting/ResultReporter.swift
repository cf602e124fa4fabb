import ImgFetchCore

/// Receives every list item's outcome and the end of the run; the progress renderer and JSONL plug in here.
protocol ResultReporter: Sendable {
    /// One list item is done. Called from any thread.
    func report(_ item: ItemReport)
    /// The run is over; called once, after the last `report`.
    func finish(_ summary: RunSummary)
}

/// One list item's outcome.
struct ItemReport: Sendable {
    let position: ListPosition
    /// The URL as it may be shown (no password).
    let displayURL: String
    let result: DownloadResult
}
