import Dispatch
import Glibc
import Synchronization

/// Stops a run from downloading what it has no room to keep.
///
/// It trips once: on the first write that fails with ENOSPC or EDQUOT (an error of class
/// `disk-full`, seen as its result is delivered), or when `statvfs` finds less than
/// `minimumFree` bytes available to the run on the output's file system (`--min-free`). Free
/// space is looked at before a new transfer is made and after each download is placed, at most
/// every `checkInterval`: about 50 `statvfs` calls a second at most, whatever the rate of items.
/// A trip is for the rest of the downloader's life.
///
/// Tripping calls `onFull` once with the error every remaining item gets (`ImageDownloader`
/// then cancels what runs and fails what waits). Shared by the list reader, the engine and the
/// decode workers; its state is atomics and one `Mutex`.
public final class DiskSpaceGuard: Sendable {
    /// The directory whose file system is watched.
    public let path: String
    /// Bytes that must stay free; 0 looks at free space never (a full disk still trips).
    public let minimumFree: Int64
    private let tripped = Atomic<Bool>(false)
    private let state = Mutex<(reason: String?, onFull: (@Sendable (DownloadError) -> Void)?)>((nil, nil))
    /// When free space may next be looked at (`DispatchTime` nanoseconds).
    private let nextCheck = Atomic<UInt64>(0)

    /// Time between two looks at free space.
    static let checkInterval: UInt64 = 20_000_000

    public init(path: String, minimumFree: Int64) {
        self.path = path
        self.minimumFree = minimumFree
    }

    /// Called once, on the thread that trips the guard, with the error of the remaining items.
    func onFull(_ body: @escaping @Sendable (DownloadError) -> Void) {
        state.withLock { $0.onFull = body }
    }

    /// Whether the guard has tripped: no new transfer may start.
    public var isFull: Bool { tripped.load(ordering: .relaxed) }

    /// Why the guard tripped ("the output's disk is full (cannot write …)"), once it has.
    public var reason: String? { state.withLock { $0.reason } }

    /// The error every remaining item fails with, once tripped.
    public var failure: DownloadError? { reason.map(Self.failure) }

    private static func failure(_ reason: String) -> DownloadError {
        DownloadError(.diskFull, "not downloaded: " + reason)
    }

    /// Trips on an error of class `disk-full` (a write that failed with ENOSPC or EDQUOT).
    public func note(_ error: DownloadError?) {
        guard let error, error.kind == .diskFull, !isFull else { return }
        trip("the output's disk is full (\(error.message))")
    }

    /// Looks at free space, unless it was looked at less than `checkInterval` ago; trips when
    /// less than `minimumFree` is left. Returns whether the run may go on.
    @discardableResult
    public func check() -> Bool {
        if isFull { return false }
        guard minimumFree > 0 else { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = nextCheck.load(ordering: .relaxed)
        guard now >= due, nextCheck.compareExchange(expected: due, desired: now + Self.checkInterval, ordering: .relaxed).exchanged
        else { return true }
        guard let available = Self.availableBytes(at: path), available < minimumFree else { return true }
        trip("\(ByteCount.format(available)) free on the output's file system (\(path)), below --min-free "
            + ByteCount.format(minimumFree))
        return false
    }

    /// Trips the guard for `reason` (the first trip wins).
    private func trip(_ reason: String) {
        let handler: (@Sendable (DownloadError) -> Void)? = state.withLock { state in
            guard state.reason == nil else { return nil }
            state.reason = reason
            tripped.store(true, ordering: .relaxed)
            return state.onFull
        }
        handler?(Self.failure(reason))
    }

    /// Bytes an unprivileged process may still write on `path`'s file system (`f_bavail`); nil if unknown.
    static func availableBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? Int64.max : bytes
    }
}
