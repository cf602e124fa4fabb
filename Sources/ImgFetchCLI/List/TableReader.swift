import ImgFetchCore

/// How lists are read: `--input-format`, `--url-column`, `--caption-column`.
struct TableSettings: Sendable, Equatable {
    var format: InputFormat = .txt
    var urlColumn = "url"
    var captionColumn: String?
}

/// A list's format (`--input-format`).
enum InputFormat: String, CaseIterable, Sendable {
    /// One URL per line, with `out=` and `priority=` fields.
    case txt
    /// RFC 4180 CSV with a header row.
    case csv
    /// Tab-separated values with a header row.
    case tsv
}

/// What a table row adds to its item: the caption and the columns passed through to its result.
struct TableRow: Sendable, Equatable {
    let caption: String?
    let columns: [TableColumn]
}

/// One column of a table row that is passed through to the item's result.
struct TableColumn: Sendable, Equatable {
    let name: String
    let value: String
}

/// Turns a CSV or TSV list into list entries: the header row names the columns, `--url-column`
/// holds the URL, `--caption-column` the caption, and every other column passes through.
struct TableReader {
    let columns: [String]
    private let urlIndex: Int
    private let captionIndex: Int?
    private var records: RecordReader

    /// Reads the header row of `descriptor`'s table; a missing URL or caption column, or no
    /// header at all, is a usage error naming the list.
    init(descriptor: Int32, dialect: RecordReader.Dialect, settings: TableSettings, listName: String) throws(SetupError) {
        records = RecordReader(descriptor: descriptor, dialect: dialect)
        var header: [String]?
        while header == nil, let record = records.next() {
            switch record {
            case .fields(let fields, _) where fields == [""]:
                continue  // blank lines before the header
            case .fields(let fields, _):
                header = fields.map { $0.trimmingWhitespace }
            case .invalid(let reason, let line):
                throw SetupError(message: "\(listName):\(line): cannot read the header row: \(reason)")
            case .readError(let message, _):
                throw SetupError(message: "cannot read list '\(listName)': \(message)")
            }
        }
        guard let header else { throw SetupError(message: "list '\(listName)' has no header row (--input-format \(dialect == .csv ? "csv" : "tsv"))") }
        let known = header.map { "'\($0)'" }.joined(separator: ", ")
        guard let urlIndex = header.firstIndex(of: settings.urlColumn) else {
            throw SetupError(message: "list '\(listName)' has no column '\(settings.urlColumn)' for the URLs "
                + "(its columns: \(known); choose one with --url-column)")
        }
        var captionIndex: Int?
        if let caption = settings.captionColumn {
            guard let index = header.firstIndex(of: caption) else {
                throw SetupError(message: "list '\(listName)' has no column '\(caption)' for the captions (its columns: \(known))")
            }
            captionIndex = index
        }
        columns = header
        self.urlIndex = urlIndex
        self.captionIndex = captionIndex
    }

    /// The next row as a list entry, with the line it starts on; nil at the end of the list.
    mutating func next() -> (line: Int, entry: ListEntry)? {
        guard let record = records.next() else { return nil }
        switch record {
        case .fields(let fields, let line):
            return (line, entry(fields))
        case .invalid(let reason, let line):
            return (line, .invalid(text: "", reason: reason))
        case .readError(let message, let line):
            return (line, .invalid(text: "", reason: "cannot read the list: \(message)"))
        }
    }

    private func entry(_ fields: [String]) -> ListEntry {
        if fields == [""] { return .skip }
        let urlText = urlIndex < fields.count ? fields[urlIndex].trimmingWhitespace : ""
        guard fields.count == columns.count else {
            return .invalid(text: urlText, reason: "row has \(fields.count) fields, the header has \(columns.count)")
        }
        var passed: [TableColumn] = []
        for (index, name) in columns.enumerated() where index != urlIndex && index != captionIndex {
            passed.append(TableColumn(name: name, value: fields[index]))
        }
        let caption = captionIndex.map { fields[$0] }
        let row = TableRow(caption: caption, columns: passed)
        guard !urlText.isEmpty else { return .invalid(text: "", reason: "empty URL in column '\(columns[urlIndex])'", row: row) }
        if urlText.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .invalid(text: urlText, reason: "control character in the URL of column '\(columns[urlIndex])'", row: row)
        }
        let url: ParsedURL
        do {
            url = try ParsedURL(urlText)
        } catch {
            return .invalid(text: urlText, reason: error.description, row: row)
        }
        return .item(ListItem(url: url, outName: nil, priority: .normal, row: row))
    }
}
