import ImgFetchCore

/// Lays out the lines of the live area for one terminal width.
///
/// Pure: the same snapshot, width and spinner phase give the same lines, so tests check layout
/// without a terminal. Every line it returns is at most `columns - 1` columns wide: a line that
/// filled the last column would leave some terminals in a pending wrap and break the redraw.
struct ProgressLineFormatter {
    /// The terminal width.
    var columns: Int
    var colors: Bool
    /// Rows of active transfers at most; with more transfers the last row says how many are hidden.
    var maxRows: Int
    /// Render count, which advances the spinners of transfers of unknown size.
    var spinnerPhase: Int

    /// The widest a line may be.
    var lineWidth: Int { max(columns - 1, 0) }

    static let minimumBarWidth = 10
    /// Below this, zero tallies give up their place to the bar.
    static let comfortableBarWidth = 20
    static let maximumBarWidth = 40

    /// Below this width only the overall line is shown: rows of a few columns tell nothing.
    static let minimumColumnsForRows = 60

    /// The overall line, the paused hosts' line when a host is paused, then the rows of active transfers.
    func lines(for snapshot: ProgressSnapshot) -> [String] {
        guard columns >= Self.minimumColumnsForRows else { return [overallLine(snapshot)] }
        return [overallLine(snapshot)] + pausedLine(snapshot.pausedHosts) + activeRows(snapshot.active)
    }

    /// `paused (429/503): https://cdn.example 12 s, http://img.example 3 s`, cut to the width
    /// with a count of the hosts that did not fit.
    func pausedLine(_ hosts: [PausedHost]) -> [String] {
        guard !hosts.isEmpty else { return [] }
        let prefix = String(repeating: " ", count: Self.rowIndent) + "paused (429/503): "
        var line = prefix
        for (index, host) in hosts.enumerated() {
            let entry = (index == 0 ? "" : ", ") + TerminalText.printable(host.host) + " \(Int(host.secondsLeft.rounded(.up))) s"
            let rest = hosts.count - index - 1
            let more = rest > 0 ? ", \(TerminalText.ellipsis) \(rest) more" : ""
            if index > 0 && TerminalText.visibleWidth(line + entry + more) > lineWidth {
                line += ", \(TerminalText.ellipsis) \(hosts.count - index) more"
                break
            }
            line += entry
        }
        return [styled(TerminalText.truncated(line, toWidth: lineWidth), SGR.yellow)]
    }

    // MARK: - Overall line

    /// One field of the overall line; when space is short, fields with the lowest `dropRank` stay.
    private struct Field {
        var text: String
        /// Columns reserved for it: at least its widest usual value, so the bar keeps its width from frame to frame.
        var width: Int
        var dropRank: Int

        init(_ text: String, visibleWidth: Int? = nil, reserve: Int = 0, dropRank: Int) {
            let actual = visibleWidth ?? text.count
            self.text = text
            self.width = max(actual, reserve)
            self.dropRank = dropRank
        }
    }

    /// Fields ranked this high (zero tallies) appear only beside a comfortable bar.
    private static let optionalRank = 8

    /// `[=====>     ] 120/300+  100 saved  15 skipped  5 failed    12.3 MiB     1.2 MiB/s  ETA 0:42`
    func overallLine(_ snapshot: ProgressSnapshot) -> String {
        let count = ProgressFields.count(done: snapshot.done, total: snapshot.total, listComplete: snapshot.listComplete)
        let failed = "\(snapshot.failed) failed"
        // Fields are kept by rank while they fit: the count and failures first; zero tallies tell
        // least and give way even to a wider bar.
        // Bytes and rate are right-aligned in their widest width, so the fields after them do not jitter.
        let all = [
            Field(count, dropRank: 0),
            Field("\(snapshot.saved) saved", dropRank: 5),
            Field("\(snapshot.skipped) skipped", dropRank: snapshot.skipped == 0 ? 9 : 6),
            Field(snapshot.failed > 0 ? styled(failed, SGR.red) : failed, visibleWidth: failed.count,
                  dropRank: snapshot.failed == 0 ? 8 : 2),
            Field(Self.rightAligned(ByteCount.format(snapshot.bytes), 10), dropRank: 7),
            Field(Self.rightAligned(ProgressFields.rate(snapshot.bytesPerSecond), 12), dropRank: 4),
            Field(ProgressFields.eta(snapshot.etaSeconds), reserve: 8, dropRank: 3),
        ]
        let budgetBesideBar = lineWidth - 3 - Self.minimumBarWidth
        guard all[0].width <= budgetBesideBar else {
            // Too narrow for any bar: as many fields as fit.
            let fields = Self.select(all, within: lineWidth)
            return TerminalText.truncated(fields.map(\.text).joined(separator: "  "), toWidth: lineWidth)
        }
        var chosen = Self.select(all, within: budgetBesideBar, where: { $0.dropRank < Self.optionalRank })
        chosen = Self.select(all, within: lineWidth - 3 - Self.comfortableBarWidth, startingWith: chosen)
        let fields = all.indices.filter(chosen.contains).map { all[$0] }
        let barWidth = min(lineWidth - 3 - Self.width(of: fields), Self.maximumBarWidth)
        let fraction = ProgressFields.fraction(done: snapshot.done, total: snapshot.total)
        return bar(fraction: fraction, width: barWidth) + " " + fields.map(\.text).joined(separator: "  ")
    }

    /// The indices of the fields that fit in `budget` columns beside those already `chosen`,
    /// taken greedily from the lowest `dropRank` up.
    private static func select(_ all: [Field], within budget: Int, startingWith chosen: Set<Int> = [],
                               where eligible: (Field) -> Bool = { _ in true }) -> Set<Int> {
        var chosen = chosen
        for index in all.indices.sorted(by: { all[$0].dropRank < all[$1].dropRank })
        where !chosen.contains(index) && eligible(all[index]) {
            let trial = chosen.union([index])
            if width(of: all.indices.filter(trial.contains).map { all[$0] }) <= budget { chosen.insert(index) }
        }
        return chosen
    }

    /// The fields that fit in `budget` columns, in display order.
    private static func select(_ all: [Field], within budget: Int) -> [Field] {
        let chosen: Set<Int> = select(all, within: budget)
        return all.indices.filter(chosen.contains).map { all[$0] }
    }

    private static func width(of fields: [Field]) -> Int {
        fields.reduce(0) { $0 + $1.width } + 2 * max(fields.count - 1, 0)
    }

    private static func rightAligned(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    // MARK: - Active rows

    /// How much of each row fits, from richest to barest.
    enum RowStyle: CaseIterable {
        /// `  name [====>     ]  45%  1.2 MiB / 2.6 MiB`, or `  name |  1.2 MiB` when the size is unknown
        case bars
        /// `  name   45%  1.2 MiB / 2.6 MiB`
        case noBars
        /// `  name   45%`, or `  name |`
        case percentOnly
    }

    static let rowIndent = 2
    static let minimumNameWidth = 8
    static let preferredNameWidth = 30
    static let minimumRowBarWidth = 8
    static let maximumRowBarWidth = 30

    /// Rows for the first `maxRows` transfers (or `maxRows - 1` and a `… and N more` row), in the
    /// richest style that still leaves names readable; none at all when even names alone do not fit.
    func activeRows(_ active: [ActiveTransfer]) -> [String] {
        guard maxRows > 0, !active.isEmpty else { return [] }
        let overflow = active.count > maxRows
        let shown = overflow ? Array(active.prefix(maxRows - 1)) : active
        var rows = shown.map(RowParts.init)
        if rows.count > 1 {
            for (index, range) in TerminalText.distinctRanges(rows.map(\.name)).enumerated() {
                rows[index].distinct = range
            }
        }
        for style in RowStyle.allCases {
            guard let layout = layout(rows, style: style) else { continue }
            var lines = rows.map { render($0, layout: layout) }
            if overflow {
                let more = "\(String(repeating: " ", count: Self.rowIndent))\(TerminalText.ellipsis) and \(active.count - shown.count) more"
                lines.append(TerminalText.truncated(more, toWidth: lineWidth))
            }
            return lines
        }
        return []
    }

    /// The cleaned-up pieces of one row.
    private struct RowParts {
        var name: String
        /// Where the name differs from the other rows' names; kept when it is cut.
        var distinct: Range<Int>?
        /// nil when the size is unknown: a spinner, no bar, no percent.
        var fraction: Double?
        var bytes: String
        /// `waiting 7s` or `stalled 12s`, after the bytes.
        var note: String?
        /// Columns reserved for `bytes`: the received count may grow to 10 (`1023.9 KiB`), the
        /// expected one is fixed, so the bars keep their width while a transfer runs.
        var bytesWidth: Int
        var nameWidth: Int { TerminalText.visibleWidth(name) }

        init(_ transfer: ActiveTransfer) {
            name = TerminalText.printable(transfer.name)
            fraction = transfer.expected.map { ProgressFields.fraction(received: transfer.received, expected: $0) }
            note = transfer.note
            // Nothing received yet: the note says so, without a `0 B`.
            bytes = transfer.received == 0 && note != nil ? "" : ProgressFields.transferred(received: transfer.received, expected: transfer.expected)
            let widestReceived = 10
            bytesWidth = max(bytes.count, transfer.expected.map { widestReceived + 3 + ByteCount.format($0).count } ?? widestReceived)
        }
    }

    /// The column widths all rows of a frame share, so their bars line up.
    private struct RowLayout {
        var style: RowStyle
        var nameWidth: Int
        var barWidth: Int
    }

    private func layout(_ rows: [RowParts], style: RowStyle) -> RowLayout? {
        let longestName = rows.map(\.nameWidth).max() ?? 0
        let known = rows.filter { $0.fraction != nil }.map(\.bytesWidth).max()
        let unknown = rows.filter { $0.fraction == nil }.map(\.bytesWidth).max()
        // Columns after the name, not counting the inside of the bar.
        let knownTail: Int?
        let unknownTail: Int?
        switch style {
        case .bars:
            knownTail = known.map { 1 + 2 + 1 + 4 + 2 + $0 }        // " [" "] " " 45%" "  " bytes
            unknownTail = unknown.map { 1 + 1 + 2 + $0 }            // " " spinner "  " bytes
        case .noBars:
            knownTail = known.map { 2 + 4 + 2 + $0 }                // "  " " 45%" "  " bytes
            unknownTail = unknown.map { 1 + 1 + 2 + $0 }
        case .percentOnly:
            knownTail = known.map { _ in 2 + 4 }
            unknownTail = unknown.map { _ in 1 + 1 }
        }
        let room = lineWidth - Self.rowIndent
        let noteTail = rows.compactMap { $0.note.map { 2 + $0.count } }.max() ?? 0
        var barWidth = 0
        if style == .bars, let knownTail {
            let space = room - knownTail - noteTail
            barWidth = min(max(space - min(longestName, Self.preferredNameWidth), Self.minimumRowBarWidth), Self.maximumRowBarWidth)
        }
        let tail = max(knownTail.map { $0 + barWidth } ?? 0, unknownTail ?? 0) + noteTail
        let nameWidth = min(longestName, room - tail)
        guard nameWidth >= min(longestName, Self.minimumNameWidth) else { return nil }
        return RowLayout(style: style, nameWidth: nameWidth, barWidth: barWidth)
    }

    private func render(_ row: RowParts, layout: RowLayout) -> String {
        let name = TerminalText.padded(TerminalText.middleTruncated(row.name, toWidth: layout.nameWidth, distinct: row.distinct), toWidth: layout.nameWidth)
        var line = String(repeating: " ", count: Self.rowIndent) + name + " "
        if let fraction = row.fraction {
            if layout.style == .bars { line += bar(fraction: fraction, width: layout.barWidth) }
            line += " " + ProgressFields.percent(fraction)
        } else {
            line += styled(String(ProgressFields.spinner(spinnerPhase)), SGR.cyan)
        }
        if layout.style != .percentOnly && !row.bytes.isEmpty { line += "  " + row.bytes }
        if let note = row.note { line += "  " + styled(note, SGR.yellow) }
        return TerminalText.truncated(line, toWidth: lineWidth)
    }

    // MARK: - Pieces

    /// `[=====>     ]`, the filled part green when colors are allowed.
    private func bar(fraction: Double, width: Int) -> String {
        let (filled, empty) = ProgressFields.barParts(fraction: fraction, width: width)
        return "[" + (filled.isEmpty ? "" : styled(filled, SGR.green)) + empty + "]"
    }

    private func styled(_ text: String, _ color: String) -> String {
        colors ? color + text + SGR.reset : text
    }
}
