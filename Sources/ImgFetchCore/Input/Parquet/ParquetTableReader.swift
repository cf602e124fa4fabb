import Glibc

/// Turns a Parquet file into list entries, a row at a time: `--url-column` holds the URL,
/// `--caption-column` the caption, and every other column passes through with its type (numbers
/// as numbers, text as strings, null as null). Row N (from 1) is reported as `FILE:N`.
///
/// One row group at a time, and within it one page per column: memory stays bounded however
/// many rows the file has. A file that turns out damaged midway ends its list with an error entry.
struct ParquetTableReader {
    private let file: ParquetFile
    private let settings: TableSettings
    private let urlIndex: Int
    private let captionIndex: Int?
    private let keyIndex: Int?
    private var group = -1
    private var rowsLeftInGroup: Int64 = 0
    private var cursors: [ParquetColumnCursor] = []
    private var row = 0
    private var ended = false

    /// Reads the footer of `descriptor` (taken over, and closed by `close()` or a failure) and
    /// checks the columns `settings` name.
    init(descriptor: Int32, settings: TableSettings, listName: String) throws(ListError) {
        let opened: ParquetFile
        do {
            opened = try ParquetFile(descriptor: descriptor)
        } catch {
            throw ListError(message: "cannot read list '\(listName)': \(error)")
        }
        let columns = opened.metadata.columns
        if let odd = columns.first(where: { !ParquetMetadata.readableTypes.contains($0.type) }) {
            opened.close()
            throw ListError(message: "cannot read list '\(listName)': unsupported Parquet: column '\(odd.name)' is of type "
                + "\(ParquetMetadata.typeName(odd.type)) (imgfetch reads BOOLEAN, INT32, INT64, FLOAT, DOUBLE and BYTE_ARRAY)")
        }
        let known = columns.map { "'\($0.name)'" }.joined(separator: ", ")
        func index(of name: String, for what: String) throws(ListError) -> Int {
            guard let index = columns.firstIndex(where: { $0.name == name }) else {
                opened.close()
                throw ListError(message: "list '\(listName)' has no column '\(name)' for \(what) (its columns: \(known))")
            }
            return index
        }
        let urlIndex = try index(of: settings.urlColumn, for: "the URLs; choose one with --url-column")
        guard columns[urlIndex].type == 6 else {
            opened.close()
            throw ListError(message: "list '\(listName)': column '\(settings.urlColumn)' holds numbers, not URLs "
                + "(choose another with --url-column)")
        }
        var captionIndex: Int?
        if let caption = settings.captionColumn { captionIndex = try index(of: caption, for: "the captions") }
        var keyIndex: Int?
        if let key = settings.keyColumn { keyIndex = try index(of: key, for: "the sample keys") }
        if let hash = settings.hashColumn {
            let index = try index(of: hash, for: "--verify-hash")
            guard columns[index].type == 6 else {
                opened.close()
                throw ListError(message: "list '\(listName)': column '\(hash)' holds \(ParquetMetadata.typeName(columns[index].type)), "
                    + "not hex digests as text (--verify-hash)")
            }
        }
        file = opened
        self.urlIndex = urlIndex
        self.captionIndex = captionIndex
        self.keyIndex = keyIndex
        self.settings = settings
    }

    func close() {
        file.close()
    }

    var columnNames: [String] { file.metadata.columns.map(\.name) }

    /// The next row as a list entry, with its row number; nil at the end of the file.
    mutating func next() -> (line: Int, entry: ListEntry)? {
        guard !ended else { return nil }
        do {
            while rowsLeftInGroup == 0 {
                group += 1
                guard group < file.metadata.rowGroups.count else {
                    ended = true
                    return nil
                }
                let chunks = file.metadata.rowGroups[group]
                rowsLeftInGroup = chunks.rowCount
                cursors = try zip(file.metadata.columns, chunks.columns).map { column, chunk throws(ParquetError) in
                    try ParquetColumnCursor(file: file, column: column, chunk: chunk)
                }
            }
            var values: [ParquetValue] = []
            values.reserveCapacity(cursors.count)
            for index in cursors.indices {
                guard let value = try cursors[index].next() else {
                    throw ParquetError.malformed("column '\(file.metadata.columns[index].name)' ends before row \(row + 1)")
                }
                values.append(value)
            }
            rowsLeftInGroup -= 1
            row += 1
            return (row, entry(values))
        } catch {
            ended = true
            return (row + 1, .unreadable(reason: "cannot read the list: \(error)"))
        }
    }

    private func entry(_ values: [ParquetValue]) -> ListEntry {
        var passed: [TableColumn] = []
        for (index, column) in file.metadata.columns.enumerated() where index != urlIndex && index != captionIndex {
            let value = values[index]
            passed.append(value.text.map { TableColumn(name: column.name, value: $0) }
                ?? TableColumn(name: column.name, value: value.json, isJSON: true))
        }
        let key: String? = keyIndex.flatMap { index in
            switch values[index] {
            case .integer(let number): String(number)
            case let value: value.text
            }
        }
        let row = TableRow(caption: captionIndex.flatMap { values[$0].text }, columns: passed, key: key)
        let urlText = values[urlIndex].text?.trimmingWhitespace ?? ""
        return TableReader.item(urlText, column: settings.urlColumn, row: row)
    }
}
