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
        let hasher = SHA256Hasher()
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
        case .item(let item):
            return Self.shard(of: key == .host ? item.url.host : item.url.normalized, count: count) == index
        case .invalid(let text, _, _):
            return Self.shard(of: "\(line)\t\(text)", count: count) == index
        }
    }

    /// `K/N`, with 0 ≤ K < N.
    static func parse(_ text: String, for option: String) throws(UsageError) -> ShardSelector {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, count <= 1_000_000, index < count else {
            throw UsageError(option: option, problem: .invalidValue(text, reason: "expected K/N, a shard K from 0 to N-1 of N shards"))
        }
        return ShardSelector(index: index, count: count)
    }

    /// The shard a cluster's environment gives this process, when no `--shard` was given:
    /// a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` with `IMGFETCH_SHARD_COUNT`, or a Slurm
    /// array's `SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN` (over `SLURM_ARRAY_TASK_STEP`,
    /// when set) with `SLURM_ARRAY_TASK_COUNT`. Nil when neither is set; a half-set one is a
    /// usage error, since running the whole list in every process is never what was meant.
    static func fromEnvironment(_ environment: [String: String]) throws(UsageError) -> ShardSelector? {
        func number(_ name: String) throws(UsageError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text) else {
                throw UsageError(option: "--shard", problem: .combination("cannot use \(name)='\(text)': expected a whole number"))
            }
            return value
        }
        func incomplete(_ names: [String], given: [String]) -> UsageError {
            let missing = names.filter { environment[$0] == nil }
            return UsageError(option: "--shard", problem: .combination("found \(given.joined(separator: " and ")) in the environment "
                + "but not \(missing.joined(separator: " or ")); set it, or give --shard K/N"))
        }
        let kubernetes = ["JOB_COMPLETION_INDEX", "IMGFETCH_SHARD_COUNT"]
        if kubernetes.contains(where: { environment[$0] != nil }) {
            guard let index = try number(kubernetes[0]), let count = try number(kubernetes[1]) else {
                throw incomplete(kubernetes, given: kubernetes.filter { environment[$0] != nil })
            }
            return try checked(index, count, from: "JOB_COMPLETION_INDEX=\(index), IMGFETCH_SHARD_COUNT=\(count)")
        }
        let slurm = ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"]
        if environment[slurm[0]] != nil {
            guard let id = try number(slurm[0]), let minimum = try number(slurm[1]), let count = try number(slurm[2]) else {
                throw incomplete(slurm, given: slurm.filter { environment[$0] != nil })
            }
            let step = try number("SLURM_ARRAY_TASK_STEP") ?? 1
            guard step >= 1, id >= minimum, (id - minimum) % step == 0 else {
                throw UsageError(option: "--shard", problem: .combination(
                    "SLURM_ARRAY_TASK_ID=\(id) is not in the array that starts at SLURM_ARRAY_TASK_MIN=\(minimum) in steps of \(step)"))
            }
            return try checked((id - minimum) / step, count, from: "SLURM_ARRAY_TASK_ID=\(id), SLURM_ARRAY_TASK_MIN=\(minimum), "
                + "SLURM_ARRAY_TASK_COUNT=\(count)")
        }
        return nil
    }

    private static func checked(_ index: Int, _ count: Int, from source: String) throws(UsageError) -> ShardSelector {
        guard count >= 1, count <= 1_000_000, index < count else {
            throw UsageError(option: "--shard", problem: .combination("\(source) give shard \(index) of \(count); expected 0 to N-1 of N"))
        }
        return ShardSelector(index: index, count: count)
    }
}
