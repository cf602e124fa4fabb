/// The file names of shard N: `000123.tar`, `000123.jsonl`, `000123_stats.json`.
public struct ShardNames: Sendable {
    public let number: String

    /// `prefix` is the worker's part of the name under `--shard K/N` (`ShardNames.prefix`).
    public init(shard: Int, prefix: String = "") {
        let digits = String(shard)
        number = prefix + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    public var tar: String { number + ".tar" }
    public var results: String { number + ".jsonl" }
    public var stats: String { number + "_stats.json" }

    /// The counts of every shard of the dataset (of the worker's, with a prefix): `stats.json`,
    /// `3-of-8-stats.json`, `laion-stats.json` for `laion_`: never a name that ends `_stats.json`,
    /// which a shard's is, and which loaders glob.
    public static func datasetStats(prefix: String) -> String {
        var stem = Substring(prefix)
        while let last = stem.last, last == "_" || last == "-" { stem = stem.dropLast() }
        return stem.isEmpty ? "stats.json" : stem + "-stats.json"
    }

    /// The key of row `row` of the shard, when the list has no key column: `000123_000045`.
    public func key(row: Int) -> String {
        let digits = String(row)
        return number + "_" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
