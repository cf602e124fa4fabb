/// A list that cannot be used at all: unreadable, a directory, or a table without the columns asked
/// for. (A bad line or row is one item's failure, `ListEntry.invalid`, and the run goes on.)
public struct ListError: Error, Equatable, Sendable {
    /// What is wrong, naming the list: `list 'photos.csv' has no column 'url' for the URLs …`.
    public let message: String

    public init(message: String) {
        self.message = message
    }
}
