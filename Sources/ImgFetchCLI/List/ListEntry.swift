import ImgFetchCore

/// Where an item came from: the list's name and the line number, as `FILE:LINE`.
struct ListPosition: Sendable, CustomStringConvertible {
    let listName: String
    let line: Int

    var description: String { "\(listName):\(line)" }
}

/// What one list line means.
enum ListEntry: Equatable {
    /// Blank or a `#` comment.
    case skip
    case item(ListItem)
    /// The line cannot be used; `text` is what was read (for the result line), `reason` says why,
    /// and `row` is what a table row passes through, when its columns could be told apart.
    case invalid(text: String, reason: String, row: TableRow? = nil)
    /// The list could not be read on (an I/O error): no lines follow. Every process of a sharded
    /// run reports it, since only the one that met it knows, and a worker exits 75 for it.
    case unreadable(reason: String)
}

extension ListEntry {
    /// The table row an entry carries, if any.
    var row: TableRow? {
        switch self {
        case .item(let item): item.row
        case .invalid(_, _, let row): row
        case .skip, .unreadable: nil
        }
    }
}

/// A usable list line or table row: the URL and its optional fields.
struct ListItem: Equatable {
    let url: ParsedURL
    let outName: String?
    let priority: RequestPriority
    /// A table row's caption and other columns; nil for a plain list.
    var row: TableRow?

    init(url: ParsedURL, outName: String?, priority: RequestPriority, row: TableRow? = nil) {
        self.url = url
        self.outName = outName
        self.priority = priority
        self.row = row
    }
}
