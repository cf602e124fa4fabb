import Glibc
import ImgFetchCore

/// Makes room for the run's open files: one socket per transfer, one temp file per body in flight
/// or in the decode backlog, and a few for lists, the cache index and the report.
///
/// Many systems start processes with a soft limit of 1024 open files and a much higher hard
/// limit; `-j 1024` needs about twice the soft one. The soft limit is raised as far as the run
/// needs (never above the hard limit), and a run that cannot fit stops before it starts.
enum FileDescriptorLimit {
    /// Open files a run with `concurrency` transfers and a `backlog`-body decode backlog may hold.
    static func needed(concurrency: Int, backlog: Int) -> Int {
        2 * concurrency + backlog + 64
    }

    /// Raises the soft limit to `needed` if it is lower; throws when the hard limit is lower still.
    static func ensure(_ needed: Int, concurrency: Int) throws(SetupError) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(needed)
        // RLIM_INFINITY (all bits set) is larger than any count, so the comparisons hold for it too;
        // Swift cannot import the macro (it is written as -1 cast to an unsigned type).
        guard limit.rlim_cur < wanted else { return }
        if limit.rlim_max < wanted {
            throw SetupError(message: "-j \(concurrency) needs up to \(needed) open files, but the limit is \(limit.rlim_max) "
                + "(ulimit -Hn); use a lower -j or raise the limit")
        }
        let current = limit.rlim_cur
        limit.rlim_cur = wanted
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            throw SetupError(message: "-j \(concurrency) needs up to \(needed) open files, but the limit is \(current) "
                + "and cannot be raised: \(Errno.describe()); use a lower -j or raise the limit (ulimit -n)")
        }
    }
}
