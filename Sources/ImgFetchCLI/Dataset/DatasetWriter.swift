import ImgFetchCore
import Synchronization

/// Puts a run's rows into WebDataset shards (`--output-format webdataset`) in input order.
///
/// Rows finish in any order; each is held here until every row before it is written, then written
/// to its shard (`ShardWriter`) and only then reported. A shard is completed once all its rows are
/// written and the list reader has hashed its input; a shard found complete by an earlier run is
/// not opened at all (its rows come as skipped). A shard cut short (a cancelled row, the run's
/// deadline, a full disk) is discarded, and the run says so at the end.
///
/// Called from the delivery thread and the list reader's; all state is behind `state`'s lock, and
/// rows are written and reported under it, one at a time.
final class DatasetWriter: Sendable {
    struct Settings: Sendable {
        let directory: String
        let samplesPerShard: Int
        /// The image member's extension (`--save-as`), nil for the original's.
        let pixelExtension: String?
        /// What else decides a shard's bytes (`ShardInput.settings`), kept in its stats file.
        let fingerprint: String
    }

    /// A finished row, waiting for the rows before it.
    struct Row: Sendable {
        let report: ItemReport
        let key: String
        let progress: ProgressItem?
        let transfer: String
    }

    private struct State {
        var next = 0
        var waiting: [Int: Row] = [:]
        var shard: ShardWriter?
        var skipped: Set<Int> = []
        var inputDigests: [Int: String] = [:]
        var totalRows: Int?
        /// What went wrong with shards, said once the run is over.
        var problems: [String] = []
    }

    let settings: Settings
    private let state = Mutex(State())
    /// Reports a row once it is written (or skipped); called under the lock, in input order.
    private let deliver: @Sendable (Row) -> Void

    init(settings: Settings, deliver: @escaping @Sendable (Row) -> Void) {
        self.settings = settings
        self.deliver = deliver
    }

    /// The shard of row `sequence` (counted over every list, from 0) and its row within the shard.
    func position(of sequence: Int) -> (shard: Int, row: Int) {
        (sequence / settings.samplesPerShard, sequence % settings.samplesPerShard)
    }

    /// Row `sequence` is done. Any thread.
    func finished(_ sequence: Int, _ row: Row) {
        state.withLock { state in
            state.waiting[sequence] = row
            while let row = state.waiting.removeValue(forKey: state.next) {
                write(row, sequence: state.next, &state)
                state.next += 1
                completeShardIfDone(&state)
            }
        }
    }

    /// The list reader has read every row of `shard`; `digest` is their `ShardInput` hash.
    func inputComplete(shard: Int, digest: String) {
        state.withLock { state in
            state.inputDigests[shard] = digest
            completeShardIfDone(&state)
        }
    }

    /// `shard` is complete from an earlier run: its rows will come as skipped, and nothing is written.
    func skip(shard: Int) {
        state.withLock { _ = $0.skipped.insert(shard) }
    }

    /// The lists are read: `rows` rows in all, which may end the last shard early.
    func listEnded(rows: Int) {
        state.withLock { state in
            state.totalRows = rows
            completeShardIfDone(&state)
        }
    }

    /// The run is over: a shard still open was cut short and is discarded. Returns what went
    /// wrong with shards (empty when every shard the run wrote is complete).
    func finish() -> [String] {
        state.withLock { state in
            if let shard = state.shard {
                shard.discard()
                if shard.rows > 0 { state.problems.append("shard \(settings.directory)/\(shard.names.tar) was cut short and is not written; run again to complete it") }
                state.shard = nil
            }
            return state.problems
        }
    }

    private func write(_ row: Row, sequence: Int, _ state: inout State) {
        let (shard, _) = position(of: sequence)
        var report = row.report
        if state.skipped.contains(shard) {
            report.sampleKey = row.key
        } else {
            if state.shard == nil {
                state.shard = ShardWriter(shard: shard, directory: settings.directory, pixelExtension: settings.pixelExtension)
            }
            report = state.shard!.add(report, key: row.key)
        }
        deliver(Row(report: report, key: row.key, progress: row.progress, transfer: row.transfer))
    }

    /// Completes (or discards) the open shard once all its rows are written and its input is hashed.
    private func completeShardIfDone(_ state: inout State) {
        guard let shard = state.shard else { return }
        let expected = state.totalRows.map { min(settings.samplesPerShard, $0 - shard.shard * settings.samplesPerShard) }
            ?? settings.samplesPerShard
        guard shard.rows >= expected, let digest = state.inputDigests[shard.shard] else { return }
        state.shard = nil
        state.inputDigests[shard.shard] = nil
        let path = settings.directory + "/" + shard.names.tar
        if shard.cutShort {
            shard.discard()
            state.problems.append("shard \(path) was cut short and is not written; run again to complete it")
            return
        }
        do {
            try shard.commit(inputDigest: digest, settings: settings.fingerprint)
        } catch {
            state.problems.append(error.message)
        }
    }
}
