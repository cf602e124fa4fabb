import ImgFetchCore

extension ShardNames {
    /// With `--shard K/N`, every name and generated key starts with `K-of-N-`, so that N workers
    /// may share one output directory and their samples' keys stay distinct (`3-of-8-000000.tar`,
    /// key `3-of-8-000000_000012`), and a run with another N never leaves its shards beside
    /// another run's under the same names. Without it, nothing.
    static func prefix(for selector: ShardSelector?) -> String {
        guard let selector, selector.count > 1 else { return "" }
        return "\(selector.index)-of-\(selector.count)-"
    }
}
