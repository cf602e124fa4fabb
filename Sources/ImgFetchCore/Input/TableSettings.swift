/// How lists are read: `--input-format`, `--url-column`, `--caption-column`.
public struct TableSettings: Sendable, Equatable {
    public var format: InputFormat = .txt
    public var urlColumn = "url"
    public var captionColumn: String?
    /// The column of each sample's key (`--key-column`, WebDataset shards).
    public var keyColumn: String?

    public init(format: InputFormat = .txt, urlColumn: String = "url", captionColumn: String? = nil, keyColumn: String? = nil) {
        self.format = format
        self.urlColumn = urlColumn
        self.captionColumn = captionColumn
        self.keyColumn = keyColumn
    }
}

/// A list's format (`--input-format`).
public enum InputFormat: String, CaseIterable, Sendable {
    /// One URL per line, with `out=` and `priority=` fields.
    case txt
    /// RFC 4180 CSV with a header row.
    case csv
    /// Tab-separated values with a header row.
    case tsv
    /// JSON Lines: one JSON object per line, its members the columns.
    case jsonl
    /// Apache Parquet: a flat table (LAION's and DataComp's lists), read a page at a time.
    case parquet
}
