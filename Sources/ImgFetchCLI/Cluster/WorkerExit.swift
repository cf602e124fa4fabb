import Glibc
import ImgFetchCore

/// `--failures-are-data`: the exit codes and the stdin discipline of a worker that a cluster
/// engine (a Spark task, a Kubernetes Job, a Slurm array) runs and retries.
///
/// - 0: every item has its result line, failed ones included: failures are data, not a reason to
///   run the task again.
/// - 75 (`EX_TEMPFAIL`): the run could not do its job for reasons a retry may fix: the output
///   directory or the report cannot be written, the disk is full (an item failed with class
///   `filesystem`, or a shard could not be written), the object store failed (class `storage`,
///   a shard not uploaded), a list could not be read to its end, a
///   signal, `--deadline`, stdout closed.
/// - 2: a usage error, which a retry cannot fix.
///
/// A worker that stops before reading its list (a usage or set-up error) still reads a stdin list
/// to its end, within `drainLimit`: an engine that writes the list into the worker's stdin would
/// otherwise fail to write, or lose the rest of its output. After the deadline or EPIPE it exits
/// 75 at once, and its engine runs it again.
enum WorkerExit {
    static let temporaryFailure: Int32 = 75

    /// The exit code of a run that reached its end (`ending`), with `summary`'s counts;
    /// `incomplete`: a shard, the report or the gallery was not written, or a list not read to its end.
    static func code(_ ending: RunEnding, summary: RunSummary, incomplete: Bool) -> Int32 {
        guard ending == .completed else { return temporaryFailure }
        let fileFailures = [DownloadError.Kind.filesystem, .diskFull, .storage].reduce(0) { $0 + (summary.failedByClass[$1] ?? 0) }
        return fileFailures > 0 || incomplete ? temporaryFailure : ImgFetchCommand.ExitCode.success
    }

    /// Most seconds a worker spends draining stdin, and most seconds it waits for the next byte:
    /// a writer that never closes (`yes URL | imgfetch …`) must not keep it forever.
    static let drainLimit = 30.0
    static let drainIdleLimit = 5.0

    /// Reads stdin to its end and drops it, when it is a list (`lists` empty or holding `-`) and
    /// not a terminal, so that the process writing it never sees a closed pipe.
    static func drainStandardInput(lists: [String]) {
        guard lists.isEmpty || lists.contains("-"), isatty(STDIN_FILENO) == 0 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        let start = monotonicSeconds()
        while true {
            let wait = min(drainIdleLimit, drainLimit - (monotonicSeconds() - start))
            guard wait > 0 else { return }
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(wait * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return }
            let count = read(STDIN_FILENO, buffer.baseAddress, buffer.count)
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            return
        }
    }
}
