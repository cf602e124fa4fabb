/// What one list line means.
public enum ListEntry: Equatable, Sendable {
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
    public var row: TableRow? {
        switch self {
        case .item(let item): item.row
        case .invalid(_, _, let row): row
        case .skip, .unreadable: nil
        }
    }
}
