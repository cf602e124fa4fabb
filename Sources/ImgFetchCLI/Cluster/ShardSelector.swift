import ImgFetchCore

/// `--shard K/N`: which list items this process takes when N processes share one list (a
/// Kubernetes Indexed Job, a Slurm array, Spark's partitions). An item's shard is a stable hash
/// of its URL, or of its host with `--shard-by host`, modulo N: the first 8 bytes of the SHA-256 of
/// the normalized URL (or the lowercased host), read as a big-endian integer. Any tool can compute
/// it (Python: `int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % n`), so every
/// item belongs to exactly one shard for any N, whoever splits the list.
///
/// A line that is not a URL (a bad line, a bad row) belongs to the shard of its line number and
/// text, so exactly one process reports it.
struct ShardSelector: Sendable, Equatable {
    /// What the hash is taken of.
    enum Key: String, Sendable, CaseIterable {
        /// The normalized URL: items spread evenly.
        case url
        /// The host: all of a host's items in one process, so per-host limits hold across the cluster.
        case host
    }

    let index: Int
    let count: Int
    var key: Key = .url

    /// The shard of `text`.
    static func shard(of text: String, count: Int) -> Int {
        let hasher = DigestHasher()
        hasher.update(text)
        let prefix = UInt64(hasher.finish().prefix(16), radix: 16) ?? 0
        return Int(prefix % UInt64(count))
    }

    /// Whether this process takes `entry`, read at `line`.
    func takes(_ entry: ListEntry, line: Int) -> Bool {
        guard count > 1 else { return true }
        switch entry {
        case .skip:
            return false
        case .unreadable:
            return true
        case .item(let item):
            return Self.shard(of: key == .host ? item.url.host : item.url.normalized, count: count) == index
        case .invalid(let text, _, _):
            return Self.shard(of: "\(line)\t\(text)", count: count) == index
        }
    }

    /// Whether K of N is a shard: 0 ≤ K < N ≤ 1,000,000.
    private static func isShard(_ index: Int, of count: Int) -> Bool {
        (1...1_000_000).contains(count) && index < count
    }

    /// `text` as a whole number, ASCII digits only (`Int` alone would take "+3").
    private static func wholeNumber(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// `K/N`, with 0 ≤ K < N.
    static func parse(_ text: String, for option: String) throws(UsageError) -> ShardSelector {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = wholeNumber(parts[0]), let count = wholeNumber(parts[1]), isShard(index, of: count) else {
            throw UsageError(option: option, problem: .invalidValue(text, reason: "expected K/N, a shard K from 0 to N-1 of N shards"))
        }
        return ShardSelector(index: index, count: count)
    }

    /// The shard a cluster's environment gives this process, when no `--shard` was given:
    /// `IMGFETCH_SHARD_COUNT` (N, which opts in) with a Kubernetes Indexed Job's
    /// `JOB_COMPLETION_INDEX` or a Slurm array's `SLURM_ARRAY_TASK_ID` (K; the array must run
    /// 0 to N-1). Nil when `IMGFETCH_SHARD_COUNT` and `JOB_COMPLETION_INDEX` are unset.
    ///
    /// Slurm's own `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT` are not used: Slurm sets
    /// them in every array task, so a task that fetches a list of its own would be sharded
    /// without asking, and they describe the array submitted, so rerunning one task
    /// (`sbatch --array=2`) would make it shard 0 of 1, the whole list.
    static func fromEnvironment(_ environment: [String: String]) throws(UsageError) -> ShardSelector? {
        func number(_ name: String) throws(UsageError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = wholeNumber(Substring(text)) else {
                throw UsageError(option: "--shard", problem: .combination("cannot use \(name)='\(text)': expected a whole number"))
            }
            return value
        }
        let count = try number("IMGFETCH_SHARD_COUNT")
        if let index = try number("JOB_COMPLETION_INDEX") {
            guard let count else {
                throw UsageError(option: "--shard", problem: .combination("found JOB_COMPLETION_INDEX in the environment but not "
                    + "IMGFETCH_SHARD_COUNT; set it to the Job's completions, or give --shard K/N"))
            }
            return try checked(index, count, from: "JOB_COMPLETION_INDEX=\(index), IMGFETCH_SHARD_COUNT=\(count)")
        }
        guard let count else { return nil }
        guard let index = try number("SLURM_ARRAY_TASK_ID") else {
            throw UsageError(option: "--shard", problem: .combination("found IMGFETCH_SHARD_COUNT in the environment but neither "
                + "JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID; give --shard K/N"))
        }
        return try checked(index, count, from: "SLURM_ARRAY_TASK_ID=\(index), IMGFETCH_SHARD_COUNT=\(count) (a Slurm array "
            + "must run 0 to N-1)")
    }

    private static func checked(_ index: Int, _ count: Int, from source: String) throws(UsageError) -> ShardSelector {
        guard isShard(index, of: count) else {
            throw UsageError(option: "--shard", problem: .combination("\(source) give shard \(index) of \(count); expected 0 to N-1 of N"))
        }
        return ShardSelector(index: index, count: count)
    }
}
