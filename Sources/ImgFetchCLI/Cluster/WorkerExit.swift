import Glibc
import ImgFetchCore

/// `--failures-are-data`: the exit codes and the stdin discipline of a worker that a cluster
/// engine (Spark's `RDD.pipe`, a Kubernetes Job, a Slurm array) runs and retries.
///
/// - 0: every item has its result line, failed ones included: failures are data, not a reason to
///   run the task again.
/// - 75 (`EX_TEMPFAIL`): the run could not do its job for reasons a retry may fix: the output
///   directory cannot be written, the disk is full (an item failed with class `filesystem`, or a
///   shard could not be written), a signal, `--deadline`, stdout closed.
/// - 2: a usage error, which a retry cannot fix.
///
/// A worker reads its stdin to the end even when it stops early: an engine that writes the list
/// into the worker's stdin would otherwise fail to write, or lose the rest of its output.
enum WorkerExit {
    static let temporaryFailure: Int32 = 75

    /// The exit code of a run that reached its end (`ending`), with `summary`'s counts.
    static func code(_ ending: RunEnding, summary: RunSummary, shardsIncomplete: Bool) -> Int32 {
        guard ending == .completed else { return temporaryFailure }
        let fileFailures = summary.failedByClass[.filesystem] ?? 0
        return fileFailures > 0 || shardsIncomplete ? temporaryFailure : ImgFetchCommand.ExitCode.success
    }

    /// Reads stdin to its end and drops it, when it is a list (`lists` empty or holding `-`) and
    /// not a terminal, so that the process writing it never sees a closed pipe.
    static func drainStandardInput(lists: [String]) {
        guard lists.isEmpty || lists.contains("-"), isatty(STDIN_FILENO) == 0 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(STDIN_FILENO, buffer.baseAddress, buffer.count)
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            return
        }
    }
}
