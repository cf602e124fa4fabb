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
    /// The line cannot be used; `text` is what was read (for the result line), `reason` says why.
    case invalid(text: String, reason: String)
}

/// A usable list line: the URL and its optional fields.
struct ListItem: Equatable {
    let url: ParsedURL
    let outName: String?
    let priority: RequestPriority
}
