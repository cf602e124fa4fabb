/// How lists are read: `--input-format`, `--url-column`, `--caption-column`.
public struct TableSettings: Sendable, Equatable {
    public var format: InputFormat = .txt
    public var urlColumn = "url"
    public var captionColumn: String?
    /// The column of each sample's key (`--key-column`, WebDataset shards).
    public var keyColumn: String?
    /// The column of each row's expected digest (`--verify-hash`), which must be there.
    public var hashColumn: String?
    /// `--column-type NAME=TYPE`: CSV and TSV columns passed through typed, not as strings.
    public var columnTypes: [String: ColumnType] = [:]

    public init(format: InputFormat = .txt, urlColumn: String = "url", captionColumn: String? = nil, keyColumn: String? = nil) {
        self.format = format
        self.urlColumn = urlColumn
        self.captionColumn = captionColumn
        self.keyColumn = keyColumn
    }
}

/// What a CSV or TSV column's text becomes in an item's JSON (`--column-type`): fields are strings
/// unless told, so that `00123` stays `00123`.
public enum ColumnType: String, CaseIterable, Sendable {
    case int, float, bool, string

    /// `text` as JSON of this type, or nil when it is not one; an empty field is `null`.
    public func json(_ text: String) -> String? {
        let trimmed = text.trimmingWhitespace
        if trimmed.isEmpty { return self == .string ? JSONWriter.string(text) : "null" }
        switch self {
        case .string:
            return JSONWriter.string(text)
        case .int:
            guard let value = Int64(trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed) else { return nil }
            return String(value)
        case .float:
            guard let value = Double(trimmed), value.isFinite,
                  trimmed.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else { return nil }
            // With its `.0`: a reader in Python gets a float, not an int.
            return String(value)
        case .bool:
            switch trimmed.lowercased() {
            case "true", "1", "yes": return "true"
            case "false", "0", "no": return "false"
            default: return nil
            }
        }
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
