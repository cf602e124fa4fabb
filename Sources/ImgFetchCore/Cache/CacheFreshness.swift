/// How long a stored response stays fresh, and how old it already was when it arrived (RFC 9111 §4.2).
public struct CacheFreshness: Sendable, Equatable {
    /// Seconds the response is fresh for, counted from its generation (its freshness_lifetime).
    public var lifetime: Double
    /// Its age when it arrived (corrected_initial_age, §4.2.3).
    public var initialAge: Double
    /// When it arrived, in seconds since the epoch (response_time).
    public var responseTime: Double

    /// Heuristic freshness (only Last-Modified given) is this fraction of the time since the last
    /// modification, as RFC 9111 §4.2.2 suggests…
    static let heuristicFraction = 0.1
    /// …and never longer than a week, so a nightly job notices changes to long-unchanged files.
    static let heuristicCap: Double = 7 * 24 * 3600

    public init(lifetime: Double, initialAge: Double, responseTime: Double) {
        self.lifetime = lifetime
        self.initialAge = initialAge
        self.responseTime = responseTime
    }

    /// The freshness of a response received between `requestTime` and `responseTime` (seconds since the epoch).
    public init(headers: ResponseCacheHeaders, requestTime: Double, responseTime: Double) {
        let date = headers.date.flatMap(HTTPDate.parse) ?? responseTime
        let directives = headers.directives
        if let maxAge = directives.maxAge {
            lifetime = Double(maxAge)
        } else if let expires = headers.expires {
            // An invalid Expires ("0", "-1") means already expired (§5.3).
            lifetime = HTTPDate.parse(expires).map { max(0, $0 - date) } ?? 0
        } else if let lastModified = headers.lastModified.flatMap(HTTPDate.parse), lastModified < date {
            lifetime = min((date - lastModified) * Self.heuristicFraction, Self.heuristicCap)
        } else {
            lifetime = 0
        }
        let ageValue = headers.age.flatMap { Double($0.filter { $0 != " " }) }.map { max(0, $0) } ?? 0
        let apparentAge = max(0, responseTime - date)
        let responseDelay = max(0, responseTime - requestTime)
        initialAge = max(apparentAge, ageValue + responseDelay)
        self.responseTime = responseTime
    }

    /// The response's age at `now` (current_age).
    public func currentAge(now: Double) -> Double {
        initialAge + max(0, now - responseTime)
    }

    /// True while the response may be reused without asking the server.
    public func isFresh(now: Double) -> Bool {
        lifetime > currentAge(now: now)
    }
}
