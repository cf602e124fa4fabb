/// A usable list line or table row: the URL and its optional fields.
public struct ListItem: Equatable, Sendable {
    public let url: ParsedURL
    /// The line's `out=` name and priority, as the downloader takes them.
    public let options: DownloadOptions
    /// A table row's caption and other columns; nil for a plain list.
    public var row: TableRow?

    public init(url: ParsedURL, options: DownloadOptions = DownloadOptions(), row: TableRow? = nil) {
        self.url = url
        self.options = options
        self.row = row
    }
}
