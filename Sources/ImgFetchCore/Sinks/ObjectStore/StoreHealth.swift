import Dispatch
import Synchronization

/// Stops a run whose store will not take its output, as `DiskSpaceGuard` stops one whose disk
/// is full: every upload would fail after its download, so no more downloads are worth making.
///
/// It trips once, on the first of:
/// - a write the store refuses for a reason no other write will escape: the keys or their rights
///   (`AccessDenied`, `SignatureDoesNotMatch`, `InvalidAccessKeyId`, `InvalidToken`,
///   `ExpiredToken`, any 403), a bucket that is gone (`NoSuchBucket`) or in another region (a 301,
///   `AuthorizationHeaderMalformed`), or no keys at all (a
///   credential source that stopped answering once its keys expired);
/// - `failuresInARow` requests in a row that failed after their retries (no answer, timeouts,
///   5xx): a store that is down. A request that succeeds starts the count again.
///
/// A read the store refuses does not trip it: AWS answers 403 to a HEAD of a missing object for
/// keys without `s3:ListBucket`, which may still write. Tripping calls `onTrip` once, on a
/// thread of its own, with the error the remaining items fail with; every request of the
/// store's clients after that fails at once with it, without being sent.
public final class StoreHealth: Sendable {
    /// Requests in a row that failed after their retries before the store counts as down.
    public static let failuresInARow = 5

    /// The store's error codes that stop the run when a write gets one.
    static let stoppingCodes: Set<String> = ["AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken",
                                             "ExpiredToken", "TokenRefreshRequired", "NoSuchBucket", "AllAccessDisabled",
                                             "AccountProblem", "InvalidSecurity", "InvalidBucketName",
                                             // The bucket is in another region than the requests are signed for.
                                             "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException"]

    private struct State {
        var inARow = 0
        var reason: String?
        var onTrip: (@Sendable (DownloadError) -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// Called once, when the health trips, with the error every remaining item fails with.
    public func onTrip(_ body: @escaping @Sendable (DownloadError) -> Void) {
        state.withLock { $0.onTrip = body }
    }

    /// The error requests and items fail with once tripped; nil before.
    public var stopError: DownloadError? { reason.map(Self.failure) }

    /// Why the health tripped ("the store refuses this run's writes (…)"), once it has.
    public var reason: String? { state.withLock { $0.reason } }

    private static func failure(_ reason: String) -> DownloadError {
        DownloadError(.storage, "not uploaded: " + reason)
    }

    func succeeded() {
        state.withLock { $0.inARow = 0 }
    }

    /// What a request that failed says of the store: `refusal` is the store's answer to a write
    /// (its error code, or "" for none), nil for a failure that was retried until it gave up.
    func failed(_ error: DownloadError, refusal: String?, status: Int?) {
        guard error.kind != .cancelled else { return }
        if let code = refusal {
            guard Self.stoppingCodes.contains(code) || status == 403 || status == 301 else { return }
            trip("the store refuses this run's writes (\(error.message))")
            return
        }
        let count = state.withLock { state -> Int in
            state.inARow += 1
            return state.inARow
        }
        if count >= Self.failuresInARow {
            trip("the store failed \(count) requests in a row (the last: \(error.message))")
        }
    }

    /// Trips for keys that no source gives any more: no request can be signed.
    func noKeys(_ error: DownloadError) {
        guard error.kind != .cancelled else { return }
        trip("no keys to sign the store's requests (\(error.message))")
    }

    private func trip(_ reason: String) {
        let error = Self.failure(reason)
        let handler: (@Sendable (DownloadError) -> Void)? = state.withLock { state in
            guard state.reason == nil else { return nil }
            state.reason = reason
            return state.onTrip
        }
        // On a thread of its own: the handler cancels the downloads, whose results reach the
        // uploads, which may be what called here.
        if let handler { DispatchQueue.global().async { handler(error) } }
    }
}
