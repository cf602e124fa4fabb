
/// One list item's outcome, with its place in the list: what the stages after the downloader
/// (the reporter, `DatasetWriter`, `ObjectUploader`) take.
public struct ItemReport: Sendable {
    public let position: ListPosition
    /// The URL as it may be shown (no password).
    public let displayURL: String
    public var result: DownloadResult
    /// What a table row adds to its result: the caption and the other columns; nil for a plain list.
    public var row: TableRow?
    /// The sample's key in a WebDataset shard (`--output-format webdataset`); nil otherwise.
    public var sampleKey: String?

    public init(position: ListPosition, displayURL: String, result: DownloadResult, row: TableRow? = nil,
                sampleKey: String? = nil) {
        self.position = position
        self.displayURL = displayURL
        self.result = result
        self.row = row
        self.sampleKey = sampleKey
    }
}
