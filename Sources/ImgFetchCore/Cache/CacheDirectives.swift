/// The Cache-Control directives a private cache acts on (RFC 9111 §5.2.2).
public struct CacheDirectives: Sendable, Equatable {
    /// `max-age`, in seconds; an invalid value counts as 0 (stale), as §4.2.1 asks.
    public var maxAge: Int?
    /// Reuse only after a successful revalidation.
    public var noCache = false
    /// Do not store at all.
    public var noStore = false
    /// Once stale, never serve without revalidating.
    public var mustRevalidate = false

    public init(cacheControl: String?, pragma: String? = nil) {
        guard let cacheControl else {
            // HTTP/1.0's Pragma: no-cache counts only when there is no Cache-Control (§5.4).
            noCache = pragma.map { $0.lowercased().contains("no-cache") } ?? false
            return
        }
        for item in cacheControl.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            // "=" or "=5" names no directive (split drops the empty name).
            guard let first = parts.first, !item.trimmed.hasPrefix("=") else { continue }
            let name = first.trimmed.lowercased()
            let argument = parts.count > 1 ? parts[1].trimmed.trimmingQuotes : nil
            switch name {
            // The first max-age wins (§4.2.1 allows it); a qualified no-cache ("no-cache=Set-Cookie") is
            // taken as plain no-cache, the safe reading.
            case "max-age" where maxAge == nil: maxAge = argument.flatMap { Int($0) }.map { max($0, 0) } ?? 0
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            default: break
            }
        }
    }
}

private extension Substring {
    var trimmed: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    var trimmingQuotes: String {
        count >= 2 && first == "\"" && last == "\"" ? String(dropFirst().dropLast()) : String(self)
    }
}
