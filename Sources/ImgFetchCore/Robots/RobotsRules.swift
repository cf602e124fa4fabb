/// One host's robots.txt as it applies to one agent (RFC 9309): the rules of the group for the
/// agent's product token (every such group combined), or else of the `*` groups; or a verdict
/// for the whole host when the file could not be had (4xx: allow all; 5xx or unreachable:
/// disallow all).
///
/// Only the chosen group's rules are kept: a 500 KiB file for many crawlers costs the few rules
/// that concern imgfetch.
struct RobotsRules: Sendable, Equatable {
    struct Rule: Sendable, Equatable {
        let allows: Bool
        /// The path pattern, percent-encoding normalized: `*` matches any run of characters, a
        /// final `$` anchors the end.
        let pattern: [UInt8]
        /// The line as written, for messages (`Disallow: /private/`).
        let text: String
    }

    enum Whole: Sendable, Equatable {
        /// The file's rules decide.
        case rules
        /// No usable file (4xx, too many redirects): everything is allowed.
        case allowAll
        /// The file could not be had (5xx, a network failure): nothing is allowed; the reason says why.
        case disallowAll(String)
    }

    let whole: Whole
    let rules: [Rule]
    /// The agent the chosen group named (`imgfetch` or `*`); nil when no group applied.
    let group: String?

    /// RFC 9309 §2.5: crawlers may stop reading after 500 KiB; what follows counts as absent.
    static let maxBytes = 500 << 10

    static let allowAll = RobotsRules(whole: .allowAll, rules: [], group: nil)

    /// Most bytes of a rule's pattern quoted in messages (a skipped item's `skip_reason`).
    static let excerptBytes = 80

    /// `value` as text, cut to `excerptBytes` (at a character's start) with `…` when longer.
    static func excerpt(_ value: [UInt8]) -> String {
        guard value.count > excerptBytes else { return String(decoding: value, as: UTF8.self) }
        var end = excerptBytes
        while end > 0, value[end] & 0xC0 == 0x80 { end -= 1 }  // not inside a UTF-8 sequence
        return String(decoding: value[..<end], as: UTF8.self) + "…"
    }

    static func disallowAll(_ reason: String) -> RobotsRules { RobotsRules(whole: .disallowAll(reason), rules: [], group: nil) }

    private init(whole: Whole, rules: [Rule], group: String?) {
        self.whole = whole
        self.rules = rules
        self.group = group
    }

    /// The rules of `text` (the first `maxBytes` of it) for `agent`, a lowercase product token.
    /// Lines that are not `user-agent`, `allow` or `disallow` (sitemaps, comments, binary junk) are ignored.
    init(parsing text: [UInt8], agent: String) {
        var mine: [Rule] = []
        var anyone: [Rule] = []
        var namedMe = false
        var namedAnyone = false
        // The agents of the group being read, and whether its rules have begun.
        var agents: [String] = []
        var inRules = false
        // A UTF-8 byte order mark would glue itself to the first key.
        var body = text.starts(with: [0xEF, 0xBB, 0xBF]) ? text.dropFirst(3) : text[...]
        body = body.prefix(Self.maxBytes)
        // A file cut at the limit (the gate keeps `maxBytes` of a longer one) ends in the middle of
        // a line: that line is dropped whole, never applied in half (a cut Disallow pattern would
        // match every path that starts like it).
        if text.count >= Self.maxBytes, let last = body.last, last != 0x0A, last != 0x0D {
            body = body[..<(body.lastIndex { $0 == 0x0A || $0 == 0x0D } ?? body.startIndex)]
        }
        for rawLine in body.split(omittingEmptySubsequences: true, whereSeparator: { $0 == 0x0A || $0 == 0x0D }) {
            let line = rawLine.prefix { $0 != UInt8(ascii: "#") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let key = String(decoding: trimmingHTTPWhitespace(line[..<colon]), as: UTF8.self).lowercased()
            let value = Array(trimmingHTTPWhitespace(line[(colon + 1)...]))
            switch key {
            case "user-agent":
                if inRules {
                    agents = []
                    inRules = false
                }
                let token = Self.productToken(value)
                agents.append(token)
                if token == agent { namedMe = true }
                if token == "*" { namedAnyone = true }
            case "allow", "disallow":
                guard !agents.isEmpty else { continue }  // a rule before any group
                inRules = true
                // An empty pattern matches nothing (`Disallow:` allows all).
                guard !value.isEmpty else { continue }
                let rule = Rule(allows: key == "allow", pattern: Self.normalized(value),
                                text: (key == "allow" ? "Allow: " : "Disallow: ") + Self.excerpt(value))
                if agents.contains(agent) { mine.append(rule) }
                if agents.contains("*") { anyone.append(rule) }
            default:
                continue
            }
        }
        whole = .rules
        rules = namedMe ? mine : anyone
        group = namedMe ? agent : namedAnyone ? "*" : nil
    }

    /// The rule that disallows `pathAndQuery` (the URL's path, with `?` and the query if any), or
    /// nil when it is allowed: the longest matching pattern decides, and Allow wins a tie.
    func disallowingRule(for pathAndQuery: String) -> Rule? {
        if pathAndQuery == "/robots.txt" { return nil }
        let path = Self.normalized(Array(pathAndQuery.utf8))
        var best: Rule?
        for rule in rules where Self.matches(rule.pattern, path) {
            guard let current = best else {
                best = rule
                continue
            }
            if rule.pattern.count > current.pattern.count || (rule.pattern.count == current.pattern.count && rule.allows) {
                best = rule
            }
        }
        return best.flatMap { $0.allows ? nil : $0 }
    }

    /// The product token of a `user-agent` value: its leading letters, `_` and `-`, lowercased
    /// (`ImgFetch/1.0` names `imgfetch`); `*` stays `*`.
    static func productToken(_ value: [UInt8]) -> String {
        if value.first == UInt8(ascii: "*") { return "*" }
        let token = value.prefix { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        return String(decoding: token, as: UTF8.self).lowercased()
    }

    /// Percent-encoding made comparable (RFC 9309 §2.2.2): escapes of unreserved characters are
    /// decoded, other escapes get uppercase hex, and bytes outside printable ASCII are escaped.
    static func normalized(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out += [UInt8(ascii: "%"), hex[Int(high)], hex[Int(low)]]
                }
                index += 3
                continue
            }
            if byte <= 0x20 || byte >= 0x7F {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                out.append(byte)
            }
            index += 1
        }
        return out
    }

    /// Whether `pattern` matches a prefix of `path` (the whole of it with a final `$`). Greedy
    /// with backtracking to the last `*` only: linear in practice, O(pattern × path) at worst.
    static func matches(_ pattern: [UInt8], _ path: [UInt8]) -> Bool {
        var pattern = pattern[...]
        let anchored = pattern.last == UInt8(ascii: "$")
        if anchored { pattern = pattern.dropLast() }
        var p = pattern.startIndex
        var s = 0
        var star: (pattern: Int, path: Int)?
        while true {
            if p == pattern.endIndex {
                if !anchored || s == path.count { return true }
            } else if pattern[p] == UInt8(ascii: "*") {
                star = (p, s)
                p += 1
                continue
            } else if s < path.count && pattern[p] == path[s] {
                p += 1
                s += 1
                continue
            }
            // Mismatch (or an anchored end not reached): let the last `*` take one more byte.
            guard let last = star, last.path < path.count else { return false }
            star = (last.pattern, last.path + 1)
            p = last.pattern + 1
            s = last.path + 1
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }
}
