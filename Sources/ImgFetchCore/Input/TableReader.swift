/// Turns a CSV, TSV or JSON Lines list into list entries: the header row (or each object's
/// members) names the columns, `--url-column` holds the URL, `--caption-column` the caption, and
/// every other column passes through.
struct TableReader {
    let columns: [String]
    private let urlIndex: Int
    private let captionIndex: Int?
    private let keyIndex: Int?
    private var records: RecordReader
    /// JSON Lines: no header; each row names its own members.
    private let jsonLines: TableSettings?
    /// `--column-type`: CSV and TSV columns passed through typed.
    private let columnTypes: [String: ColumnType]

    /// A JSON Lines list: nothing to read before the rows.
    init(jsonLinesOf descriptor: Int32, settings: TableSettings) {
        records = RecordReader(descriptor: descriptor, dialect: .lines)
        columns = []
        urlIndex = 0
        captionIndex = nil
        keyIndex = nil
        jsonLines = settings
        columnTypes = [:]
    }

    /// Reads the header row of `descriptor`'s table; a missing URL or caption column, or no
    /// header at all, is a `ListError` naming the list.
    init(descriptor: Int32, dialect: RecordReader.Dialect, settings: TableSettings, listName: String) throws(ListError) {
        records = RecordReader(descriptor: descriptor, dialect: dialect)
        jsonLines = nil
        var header: [String]?
        while header == nil, let record = records.next() {
            switch record {
            case .fields(let fields, _) where fields.isEmpty:
                continue  // blank lines before the header
            case .fields(let fields, _):
                header = fields.map { $0.trimmingWhitespace }
            case .invalid(let reason, let line):
                throw ListError(message: "\(listName):\(line): cannot read the header row: \(reason)")
            case .readError(let message, _):
                throw ListError(message: "cannot read list '\(listName)': \(message)")
            }
        }
        guard let header else { throw ListError(message: "list '\(listName)' has no header row (--input-format \(dialect == .csv ? "csv" : "tsv"))") }
        var names = Set<String>()
        if let repeated = header.first(where: { !names.insert($0).inserted }) {
            throw ListError(message: "list '\(listName)' has two columns named '\(repeated)'; rename one")
        }
        let known = header.map { "'\($0)'" }.joined(separator: ", ")
        guard let urlIndex = header.firstIndex(of: settings.urlColumn) else {
            throw ListError(message: "list '\(listName)' has no column '\(settings.urlColumn)' for the URLs "
                + "(its columns: \(known); choose one with --url-column)")
        }
        var captionIndex: Int?
        if let caption = settings.captionColumn {
            guard let index = header.firstIndex(of: caption) else {
                throw ListError(message: "list '\(listName)' has no column '\(caption)' for the captions (its columns: \(known))")
            }
            captionIndex = index
        }
        if let key = settings.keyColumn, !header.contains(key) {
            throw ListError(message: "list '\(listName)' has no column '\(key)' for the sample keys (its columns: \(known))")
        }
        if let hash = settings.hashColumn, !header.contains(hash) {
            throw ListError(message: "list '\(listName)' has no column '\(hash)' for --verify-hash (its columns: \(known))")
        }
        if let missing = settings.columnTypes.keys.sorted().first(where: { !header.contains($0) }) {
            throw ListError(message: "list '\(listName)' has no column '\(missing)' (--column-type; its columns: \(known))")
        }
        columnTypes = settings.columnTypes
        columns = header
        self.urlIndex = urlIndex
        self.captionIndex = captionIndex
        keyIndex = settings.keyColumn.flatMap { header.firstIndex(of: $0) }
    }

    /// The next row as a list entry, with the line it starts on; nil at the end of the list.
    mutating func next() -> (line: Int, entry: ListEntry)? {
        guard let record = records.next() else { return nil }
        switch record {
        case .fields(let fields, let line):
            if let settings = jsonLines { return (line, entry(jsonLine: fields.first ?? "", settings)) }
            return (line, entry(fields))
        case .invalid(let reason, let line):
            return (line, .invalid(text: "", reason: reason))
        case .readError(let message, let line):
            return (line, .unreadable(reason: "cannot read the list: \(message)"))
        }
    }

    private func entry(jsonLine line: String, _ settings: TableSettings) -> ListEntry {
        if line.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .skip }
        let members: [(key: String, value: String)]
        do {
            members = try JSONObjectScanner.members(of: Array(line.utf8))
        } catch {
            return .invalid(text: "", reason: "invalid JSON line: \(error.reason)")
        }
        var passed: [TableColumn] = []
        var urlValue: String?
        var captionValue: String?
        var keyValue: String?
        for member in members {
            if member.key == settings.keyColumn && keyValue == nil {
                // A string's text, or a number as written.
                keyValue = JSONObjectScanner.string(member.value)
                    ?? (member.value.utf8.allSatisfy { (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") } ? member.value : nil)
            }
            if member.key == settings.urlColumn && urlValue == nil {
                urlValue = member.value
            } else if member.key == settings.captionColumn && captionValue == nil {
                // null is no caption, as an empty CSV field is (not the text "null").
                captionValue = member.value == "null" ? "" : member.value
            } else {
                passed.append(TableColumn(name: member.key, value: member.value, isJSON: true))
            }
        }
        // A caption that is another JSON value (a number, an object) is kept as the JSON it is.
        let row = TableRow(caption: captionValue.map { JSONObjectScanner.string($0) ?? $0 }, columns: passed, key: keyValue)
        guard let urlValue else { return .invalid(text: "", reason: "no '\(settings.urlColumn)' member for the URL", row: row) }
        guard let urlText = JSONObjectScanner.string(urlValue)?.trimmingWhitespace else {
            return .invalid(text: "", reason: "the '\(settings.urlColumn)' member is not a string", row: row)
        }
        return Self.item(urlText, column: settings.urlColumn, row: row)
    }

    private func entry(_ fields: [String]) -> ListEntry {
        if fields.isEmpty { return .skip }
        let urlText = urlIndex < fields.count ? fields[urlIndex].trimmingWhitespace : ""
        guard fields.count == columns.count else {
            return .invalid(text: urlText, reason: "row has \(fields.count) fields, the header has \(columns.count)")
        }
        var passed: [TableColumn] = []
        for (index, name) in columns.enumerated() where index != urlIndex && index != captionIndex {
            guard let type = columnTypes[name] else {
                passed.append(TableColumn(name: name, value: fields[index]))
                continue
            }
            guard let json = type.json(fields[index]) else {
                let shown = fields[index].count > 40 ? String(fields[index].prefix(37)) + "..." : fields[index]
                return .invalid(text: urlText, reason: "column '\(name)' is not \(type == .int ? "an int" : "a \(type.rawValue)"): "
                    + "'\(shown)' (--column-type \(name)=\(type.rawValue))")
            }
            passed.append(TableColumn(name: name, value: json, isJSON: true))
        }
        let row = TableRow(caption: captionIndex.map { fields[$0] }, columns: passed, key: keyIndex.map { fields[$0] })
        return Self.item(urlText, column: columns[urlIndex], row: row)
    }

    /// The row's item, or why its URL cannot be fetched (a Parquet row's too).
    static func item(_ urlText: String, column: String, row: TableRow) -> ListEntry {
        guard !urlText.isEmpty else { return .invalid(text: "", reason: "empty URL in column '\(column)'", row: row) }
        if urlText.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .invalid(text: urlText, reason: "control character in the URL of column '\(column)'", row: row)
        }
        let url: ParsedURL
        do {
            url = try ParsedURL(urlText)
        } catch {
            return .invalid(text: urlText, reason: error.description, row: row)
        }
        return .item(ListItem(url: url, row: row))
    }
}
