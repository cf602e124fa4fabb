import ImgFetchCore

/// One list item's outcome.
struct ItemReport: Sendable {
    let position: ListPosition
    /// The URL as it may be shown (no password).
    let displayURL: String
    let result: DownloadResult
}
