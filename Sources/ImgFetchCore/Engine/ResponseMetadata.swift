/// One header field of a response: the name in lowercase, the value trimmed.
struct HeaderField: Sendable, Equatable {
    let name: String
    let value: String
}

/// What the engine learned of a transfer's final response, beside its body.
struct ResponseMetadata: Sendable {
    var status: Int
    /// The protocol of the response's status line.
    var httpVersion: HTTPVersion?
    /// Every header field of the response, in order.
    var headers: [HeaderField]
    /// When the last attempt was sent and when its response was complete, in seconds since the
    /// epoch (RFC 9111's request_time and response_time).
    var requestTime: Double
    var responseTime: Double
    /// Attempts made, redirects not counted.
    var attempts: Int
    /// The normalized URL that answered, after redirects.
    var finalURL: String
}
