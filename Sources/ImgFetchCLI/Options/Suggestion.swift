/// "Did you mean …?" for a mistyped option or value: the closest of the words it could have been,
/// when one is close enough to be what was meant.
enum Suggestion {
    /// Names other tools use for ours: img2dataset's resize modes and file extensions (its options
    /// are `Img2datasetCommandLine`'s); and ours of before (`--pad-color`, now `--background`).
    private static let aliases = ["border": "pad", "jpg": "jpeg", "pad-color": "background"]

    /// Why imgfetch has no option like img2dataset's `typed` (`--processes_count`); nil when it is not one of them.
    static func foreignOption(_ typed: String) -> String? {
        Img2datasetCommandLine.reasonLeftOut(fold(typed)).map { "img2dataset's; \($0) (docs/DATASETS.md)" }
    }

    /// The word among `candidates` that `typed` most likely meant: the same after folding case and
    /// `_` to `-`, a known alias, the only one it begins (getopt's abbreviations, which imgfetch
    /// does not take), or one at most two edits away (one for short words).
    static func closest(to typed: String, among candidates: [String]) -> String? {
        let folded = fold(typed)
        if let exact = candidates.first(where: { fold($0) == folded }) { return exact }
        if let alias = aliases[folded] ?? Img2datasetCommandLine.counterpart(of: folded), candidates.contains(alias) { return alias }
        let extended = candidates.filter { fold($0).hasPrefix(folded) }
        if folded.count >= 3, extended.count == 1 { return extended[0] }
        let allowed = folded.count <= 4 ? 1 : 2
        let scored = candidates.map { ($0, distance(folded, fold($0))) }.filter { $0.1 <= allowed }
        return scored.min { $0.1 < $1.1 }?.0
    }

    private static func fold(_ word: String) -> String {
        String(word.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
                }
            }
        }
        return rows[a.count][b.count]
    }
}
