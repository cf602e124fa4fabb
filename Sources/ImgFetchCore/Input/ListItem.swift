/// A usable list line or table row: the URL and its optional fields.
public struct ListItem: Equatable, Sendable {
    public let url: ParsedURL
    public let outName: String?
    public let priority: RequestPriority
    /// A table row's caption and other columns; nil for a plain list.
    public var row: TableRow?

    public init(url: ParsedURL, outName: String?, priority: RequestPriority, row: TableRow? = nil) {
        self.url = url
        self.outName = outName
        self.priority = priority
        self.row = row
    }
}
