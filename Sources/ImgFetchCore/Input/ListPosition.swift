/// Where an item came from: the list's name and the line number, as `FILE:LINE`.
public struct ListPosition: Sendable, CustomStringConvertible {
    public let listName: String
    public let line: Int

    public init(listName: String, line: Int) {
        self.listName = listName
        self.line = line
    }

    public var description: String { "\(listName):\(line)" }
}
