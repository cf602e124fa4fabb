import CCurl

/// A URL parsed once by libcurl's URL API and used for identity, naming and fetching.
///
/// Only absolute `http` and `https` URLs are accepted. The normalized form has the
/// scheme and host lowercased, the default port and the fragment dropped.
public struct ParsedURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL that identifies the resource and is fetched (it keeps any userinfo).
    public let normalized: String
    /// The URL as it may be shown: the password of any userinfo replaced by `***`.
    public let redacted: String
    public let scheme: String
    public let host: String
    /// The port, explicit or the scheme's default.
    public let port: Int
    /// The last segment of the path, percent-decoded; empty when the path ends in `/`.
    public let lastPathSegment: String

    /// `scheme://host:port`, the unit that credentials and custom headers are bound to.
    public var origin: String { "\(scheme)://\(host):\(port)" }

    public var description: String { redacted }

    /// Longest URL accepted; libcurl's own limit is 8 MB, and no image URL needs more than this.
    public static let maxLength = 8192

    public init(_ string: String) throws(URLParseError) {
        guard string.utf8.count <= Self.maxLength else { throw .tooLong }
        guard let handle = curl_url() else { throw .invalid("out of memory") }
        defer { curl_url_cleanup(handle) }

        let setCode = curl_url_set(handle, CURLUPART_URL, string, UInt32(CURLU_NON_SUPPORT_SCHEME))
        guard setCode == CURLUE_OK else {
            if Self.isMissingItsScheme(string) { throw .missingScheme }
            throw .invalid(String(cString: curl_url_strerror(setCode)).lowercased().replacing(" url", with: " URL"))
        }
        guard let rawScheme = Self.part(handle, CURLUPART_SCHEME) else { throw .invalid("no scheme") }
        let scheme = Self.lowercased(rawScheme)
        guard scheme == "http" || scheme == "https" else {
            // `localhost:8080` parses, with the scheme `localhost`.
            if Self.isMissingItsScheme(string) { throw .missingScheme }
            throw .unsupportedScheme(scheme)
        }
        guard let rawHost = Self.part(handle, CURLUPART_HOST), !rawHost.isEmpty else { throw .invalid("no host") }
        let host = Self.lowercased(rawHost)

        // Normalize in place: lowercase host, drop the fragment, then let libcurl rebuild the URL.
        // The host is set even when unchanged: setting it drops an IPv6 zone id, which the
        // normalized URL never carries.
        curl_url_set(handle, CURLUPART_HOST, host, 0)
        curl_url_set(handle, CURLUPART_FRAGMENT, nil, 0)
        guard let normalized = Self.part(handle, CURLUPART_URL, flags: UInt32(CURLU_NO_DEFAULT_PORT)) else {
            throw .invalid("cannot rebuild URL")
        }
        let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap { Int($0) } ?? 0
        let path = Self.part(handle, CURLUPART_PATH, flags: UInt32(CURLU_URLDECODE)) ?? "/"

        var redacted = normalized
        if Self.part(handle, CURLUPART_PASSWORD) != nil {
            curl_url_set(handle, CURLUPART_PASSWORD, "***", 0)
            redacted = Self.part(handle, CURLUPART_URL, flags: UInt32(CURLU_NO_DEFAULT_PORT)) ?? "(redacted)"
        }

        self.normalized = normalized
        self.redacted = redacted
        self.scheme = scheme
        self.host = host
        self.port = port
        self.lastPathSegment = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// Whether `text` is a host and path without a scheme (`example.com/a.jpg`, `127.0.0.1:8080/a.jpg`,
    /// which libcurl would read as the scheme `127.0.0.1`): a host with a port (`:` and digits), or
    /// with a dot and a path after it, and no spaces. `photo.jpg` is a name, and `data:…`,
    /// `mailto:…` are URLs of another scheme.
    public static func isMissingItsScheme(_ text: String) -> Bool {
        if text.contains("://") || text.contains(where: { $0 == " " || $0 == "\t" }) { return false }
        let host = text.prefix { $0 != "/" }
        guard !host.isEmpty, !host.hasPrefix(".") else { return false }
        if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            return !port.isEmpty && port.allSatisfy(\.isASCII) && port.allSatisfy(\.isNumber) && colon != host.startIndex
        }
        return host.contains(".") && host.count < text.count - 1
    }

    /// `text` in lowercase; the same string, not a copy, when it is ASCII without an uppercase
    /// letter (schemes and host names almost always are).
    private static func lowercased(_ text: String) -> String {
        text.utf8.contains { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 } ? text.lowercased() : text
    }

    private static func part(_ handle: OpaquePointer, _ what: CURLUPart, flags: UInt32 = 0) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &out, flags) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }
}

/// Why a string is not a URL imgfetch can fetch.
public enum URLParseError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLong
    /// `example.com/a.jpg`: a host and path without `http://`.
    case missingScheme
    case unsupportedScheme(String)
    case invalid(String)

    public var description: String {
        switch self {
        case .tooLong: "URL longer than \(ParsedURL.maxLength) bytes"
        case .missingScheme: "not a valid URL: no scheme; add http:// or https:// in front"
        case .unsupportedScheme(let scheme): "unsupported scheme '\(scheme)' (only http and https)"
        case .invalid(let reason): "not a valid URL: \(reason)"
        }
    }
}
