import Dispatch

/// Called with bytes received so far and the expected total when the server announced one.
public typealias DownloadProgressHandler = @Sendable (_ received: Int64, _ expected: Int64?) -> Void
/// Called once with the item's result.
public typealias DownloadCompletionHandler = @Sendable (DownloadResult) -> Void

/// One caller waiting for a URL: where its file goes and whom to tell.
struct Subscriber: Sendable {
    let id: Int
    let name: OutputName
    let progress: DownloadProgressHandler?
    let completion: DownloadCompletionHandler
    let subscribedAt: DispatchTime
}
