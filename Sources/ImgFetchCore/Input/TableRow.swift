/// What a table row adds to its item: the caption and the columns passed through to its result,
/// the columns already as the one JSON object text the result line carries (one string per row,
/// however many columns: rows wait in memory until their item is done).
public struct TableRow: Sendable, Equatable {
    public let caption: String?
    /// The value of the key column (`--key-column`), which also passes through with the columns;
    /// nil without one, or when the row has none (a JSON line without the member, or not a string
    /// or number there).
    public let key: String?
    /// `{"id":"7","tags":["a"]}`: CSV and TSV fields as strings, JSON members as written; a
    /// name that comes again is dropped (a JSON object's names should be unique).
    public let columnsJSON: String

    public init(caption: String?, columns: [TableColumn], key: String? = nil) {
        self.caption = caption
        self.key = key
        var seen = Set<String>()
        var json = JSONWriter()
        for column in columns where seen.insert(column.name).inserted {
            if column.isJSON { json.add(column.name, json: column.value) } else { json.add(column.name, column.value) }
        }
        columnsJSON = json.object
    }

    /// What the row holds in memory, roughly.
    public var bytes: Int { columnsJSON.utf8.count + (caption?.utf8.count ?? 0) }
}

/// One column of a table row that is passed through to the item's result.
public struct TableColumn: Sendable, Equatable {
    public let name: String
    /// The text of a CSV or TSV field; for JSON Lines, the member's value exactly as written.
    public let value: String
    /// `value` is JSON text (a JSON Lines member), not a string to be quoted.
    public var isJSON = false
}
