import Foundation

/// A tiny VT100 screen: replays text onto a grid of cells the way a terminal would (`\r`, `\n`
/// as the tty's CR LF, `ESC[nA`, `ESC[K`/`ESC[2K`, `ESC[J`, SGR ignored, autowrap), so tests
/// assert what a person sees rather than bytes. The grid grows downward without limit.
struct ScreenEmulator {
    struct Position: Equatable { var row: Int; var column: Int }

    let columns: Int
    private var grid: [[Character]] = [[]]
    private(set) var cursor = Position(row: 0, column: 0)
    /// Whether any text landed in the last column: a line that wide wraps on some terminals.
    private(set) var reachedLastColumn = false
    private(set) var unknownSequences: [String] = []
    /// `ESC[J` from the top-left corner: a whole-screen clear, which tmux (`scroll-on-clear`) and
    /// some terminals copy into the scrollback first, stale frame and all.
    private(set) var wholeScreenClears = 0

    init(columns: Int) { self.columns = columns }

    /// The visible rows, trailing blanks and trailing empty rows removed.
    var lines: [String] {
        var lines = grid.map { String($0.filter { $0 != Self.continuation }).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
        while lines.last == "" { lines.removeLast() }
        return lines
    }

    mutating func feed(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\r":
                cursor.column = 0
            case "\n":
                cursor = Position(row: cursor.row + 1, column: 0)
            case "\u{1B}":
                index = controlSequence(scalars, at: index)
            default:
                put(Character(scalar), width: Self.cellWidth(scalar))
            }
            index += 1
        }
    }

    /// Interprets `ESC [ params final` starting at `start`; returns the index of its final byte.
    private mutating func controlSequence(_ scalars: [Unicode.Scalar], at start: Int) -> Int {
        guard start + 1 < scalars.count, scalars[start + 1] == "[" else {
            unknownSequences.append("ESC")
            return start
        }
        var end = start + 2
        var parameter = ""
        while end < scalars.count, !(0x40...0x7E).contains(scalars[end].value) {
            parameter.unicodeScalars.append(scalars[end])
            end += 1
        }
        guard end < scalars.count else { unknownSequences.append("ESC[" + parameter); return end }
        let count = Int(parameter) ?? 0
        switch (scalars[end], count) {
        case ("A", _): cursor.row = max(0, cursor.row - max(count, 1))
        case ("K", 0): clearRow(from: cursor.column)
        case ("K", 2): clearRow(from: 0)
        case ("J", 0):
            if cursor == Position(row: 0, column: 0) { wholeScreenClears += 1 }
            clearRow(from: cursor.column)
            grid.removeSubrange((cursor.row + 1)...)
        case ("m", _): break
        default: unknownSequences.append("ESC[" + parameter + String(scalars[end]))
        }
        return end
    }

    /// Fills the second cell of a wide character.
    private static let continuation: Character = "\u{0}"

    private mutating func put(_ character: Character, width: Int) {
        if cursor.column + width > columns {
            cursor = Position(row: cursor.row + 1, column: 0)  // autowrap
        }
        makeRow(cursor.row)
        while grid[cursor.row].count < cursor.column + width { grid[cursor.row].append(" ") }
        grid[cursor.row][cursor.column] = character
        if width == 2 { grid[cursor.row][cursor.column + 1] = Self.continuation }
        cursor.column += width
        if cursor.column >= columns { reachedLastColumn = true }
    }

    private mutating func clearRow(from column: Int) {
        makeRow(cursor.row)
        if column < grid[cursor.row].count { grid[cursor.row].removeSubrange(column...) }
    }

    /// Creates the row at `index` (and any rows above it) when missing.
    private mutating func makeRow(_ index: Int) {
        while grid.count <= index { grid.append([]) }
    }

    /// Independent of the code under test: CJK ideographs and kana are two cells, everything else one.
    private static func cellWidth(_ scalar: Unicode.Scalar) -> Int {
        (0x3040...0x30FF).contains(scalar.value) || (0x4E00...0x9FFF).contains(scalar.value) ? 2 : 1
    }
}
