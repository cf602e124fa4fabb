/// What identifies a shard's input, for re-runs: the SHA-256 of its rows (`digest`, fed one row
/// at a time by the list reader) and the settings that decide its bytes (`settings`). Both are
/// kept in the shard's stats file; a later run that finds the same two skips the shard without a
/// request (`FinishedShard`).
public struct ShardInput {
    public init() {}

    private let hasher = DigestHasher()

    /// Adds one row. Each field is length-prefixed, so no two different rows hash alike.
    public func add(_ entry: ListEntry, key: String) {
        var fields: [String]
        switch entry {
        case .skip:
            return
        case .item(let item):
            // Not `out=`: shards ignore it.
            fields = ["item", item.url.normalized]
        case .invalid(let text, let reason, _):
            fields = ["invalid", text, reason]
        case .unreadable(let reason):
            fields = ["unreadable", reason]
        }
        fields += [key, entry.row?.caption ?? "", entry.row?.columnsJSON ?? ""]
        for field in fields { hasher.update("\(field.utf8.count):\(field);") }
        hasher.update("\n")
    }

    /// The digest of the rows added since the last call; starts anew.
    public func finish() -> String {
        let digest = hasher.finish()
        hasher.reset()
        return digest
    }
}
