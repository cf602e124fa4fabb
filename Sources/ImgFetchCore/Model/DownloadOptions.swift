/// Per-request choices.
public struct DownloadOptions: Equatable, Sendable {
    /// Save under exactly this file name (a list's `out=`); nil derives the name from the URL.
    public var fileName: String?
    /// The request's priority class.
    public var priority: RequestPriority

    public init(fileName: String? = nil, priority: RequestPriority = .normal) {
        self.fileName = fileName
        self.priority = priority
    }
}
