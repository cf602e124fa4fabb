import ImgFetchCore

/// One list item's outcome.
struct ItemReport: Sendable {
    let position: ListPosition
    /// The URL as it may be shown (no password).
    let displayURL: String
    var result: DownloadResult
    /// What a table row adds to its result: the caption and the other columns; nil for a plain list.
    var row: TableRow?
    /// The sample's key in a WebDataset shard (`--output-format webdataset`); nil otherwise.
    var sampleKey: String?

    init(position: ListPosition, displayURL: String, result: DownloadResult, row: TableRow? = nil) {
        self.position = position
        self.displayURL = displayURL
        self.result = result
        self.row = row
    }
}
