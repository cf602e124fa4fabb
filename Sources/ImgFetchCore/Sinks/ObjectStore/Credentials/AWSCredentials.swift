/// Keys that sign requests to AWS: long-lived ones (an IAM user's), or temporary ones with a
/// session token and an expiration (from STS, a container's endpoint or instance metadata).
public struct AWSCredentials: Sendable, Equatable {
    public let accessKey: String
    public let secretKey: String
    public let sessionToken: String?
    /// Seconds since the epoch after which the keys are refused; nil: they do not expire.
    public let expiration: Double?

    public init(accessKey: String, secretKey: String, sessionToken: String? = nil, expiration: Double? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    /// Whether the keys are good for at least `margin` more seconds at `now`.
    func isFresh(at now: Double, margin: Double) -> Bool {
        expiration.map { now + margin < $0 } ?? true
    }

    /// Why the keys cannot go into a request's headers, or nil: a control character would end
    /// the header line it is in.
    var problem: String? {
        let parts = [("access key", accessKey), ("secret key", secretKey), ("session token", sessionToken ?? "x")]
        if let empty = parts.first(where: { $0.1.isEmpty }) { return "the \(empty.0) is empty" }
        if let bad = parts.first(where: { $0.1.utf8.contains { $0 < 0x20 || $0 == 0x7F } }) {
            return "the \(bad.0) has a control character"
        }
        return nil
    }
}
