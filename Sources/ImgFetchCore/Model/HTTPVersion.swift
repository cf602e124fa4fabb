/// The HTTP version a response came over, spelled as curl's `%{http_version}` writes it.
public enum HTTPVersion: String, Sendable, Equatable {
    case http1_0 = "1.0"
    case http1_1 = "1.1"
    case http2 = "2"
    case http3 = "3"

    /// The version of a status line's protocol field (`HTTP/1.1`, `HTTP/2`); nil for anything else.
    init?(statusLineProtocol field: some Collection<UInt8>) {
        guard field.starts(with: "HTTP/".utf8) else { return nil }
        switch String(decoding: field.dropFirst(5), as: UTF8.self) {
        case "1.0": self = .http1_0
        case "1.1": self = .http1_1
        case "2", "2.0": self = .http2
        case "3", "3.0": self = .http3
        default: return nil
        }
    }

    /// Whether a connection of this version carries several transfers at once.
    var multiplexes: Bool { self == .http2 || self == .http3 }
}

/// Which HTTP versions transfers may use (`--http1.1`, `--http2`).
public enum HTTPVersionPreference: String, Sendable, Equatable {
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise; curl's default.
    case automatic
    /// HTTP/1.1 everywhere.
    case http1_1
    /// As `automatic`, and plain `http://` requests also offer an upgrade to h2c.
    case http2
}
