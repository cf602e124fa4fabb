/// The response header fields that decide whether and how long a body may be reused, as the
/// server sent them (RFC 9111). Raw values are kept so that a 304 can update them field by field.
public struct ResponseCacheHeaders: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?
    public var date: String?
    public var age: String?
    /// Every Cache-Control field line of the response, joined with ", ".
    public var cacheControl: String?
    public var expires: String?
    public var pragma: String?

    public init(etag: String? = nil, lastModified: String? = nil, date: String? = nil, age: String? = nil,
                cacheControl: String? = nil, expires: String? = nil, pragma: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.date = date
        self.age = age
        self.cacheControl = cacheControl
        self.expires = expires
        self.pragma = pragma
    }

    /// The caching fields among a response's header fields.
    init(fields: [HeaderField]) {
        self.init()
        for field in fields { receive(name: field.name, value: field.value) }
    }

    /// Takes one header field if it is one of these, and ignores any other.
    mutating func receive(name: String, value: String) {
        switch name {
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "date": date = value
        case "age": age = value
        case "cache-control": cacheControl = cacheControl.map { "\($0), \(value)" } ?? value
        case "expires": expires = value
        case "pragma": pragma = value
        default: break
        }
    }

    /// These headers updated by a 304's (RFC 9111 §4.3.4): each field the 304 carries replaces the
    /// stored one. Date and Age describe the 304 itself, so the stored ones never outlive it.
    func updated(with response: ResponseCacheHeaders) -> ResponseCacheHeaders {
        ResponseCacheHeaders(etag: response.etag ?? etag, lastModified: response.lastModified ?? lastModified,
                             date: response.date, age: response.age,
                             cacheControl: response.cacheControl ?? cacheControl,
                             expires: response.expires ?? expires, pragma: response.pragma ?? pragma)
    }

    /// The request headers that make a revalidation conditional: `If-None-Match` with the ETag and
    /// `If-Modified-Since` with the Last-Modified date (a server that knows ETags prefers them).
    var validators: [String] {
        var headers: [String] = []
        if let etag, !etag.isEmpty { headers.append("If-None-Match: \(etag)") }
        if let lastModified, !lastModified.isEmpty { headers.append("If-Modified-Since: \(lastModified)") }
        return headers
    }

    /// The parsed Cache-Control directives (with `Pragma: no-cache` when Cache-Control is absent).
    var directives: CacheDirectives { CacheDirectives(cacheControl: cacheControl, pragma: pragma) }
}
