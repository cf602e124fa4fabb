/// The `X-Robots-Tag` response header's opt-outs: a site that sends `noai`, `noimageai`,
/// `noindex`, `noimageindex` or `none` for imgfetch (or for every agent) does not want the image
/// used, and the transfer stops before its body is read. These are the directives img2dataset
/// honours by default.
///
/// A value may be scoped to one agent (`otherbot: noindex`); such a value applies only when the
/// agent is `imgfetch`'s product token. Directives that carry a value of their own
/// (`unavailable_after: DATE`, `max-image-preview: large`) are not scopes.
enum RobotsTag {
    static let optOutDirectives: Set<String> = ["noai", "noimageai", "noindex", "noimageindex", "none"]

    /// Directives written `name: value`, whose name is therefore no agent.
    private static let valuedDirectives: Set<String> = ["unavailable_after", "max-snippet", "max-image-preview",
                                                        "max-video-preview"]

    /// The first `X-Robots-Tag` field value among `fields` that opts out for `agent`, or nil.
    static func optOut(in fields: [HeaderField], agent: String) -> String? {
        fields.first { $0.name == "x-robots-tag" && optsOut($0.value, agent: agent) }?.value
    }

    /// Whether one field value opts out for `agent` (a lowercase product token). An agent's name
    /// scopes the directives after it, up to the next agent's (`otherbot: noindex, imgfetch: noai`,
    /// as a proxy may merge two fields).
    static func optsOut(_ value: String, agent: String) -> Bool {
        var scope: String?
        for part in value.split(separator: ",") {
            var directive = Substring(part)
            if let colon = part.firstIndex(of: ":") {
                let name = part[..<colon].trimmingWhitespace.lowercased()
                let isAgent = !name.isEmpty && !name.contains(where: { $0 == " " || $0 == "\t" })
                    && !valuedDirectives.contains(name) && !optOutDirectives.contains(name)
                if isAgent {
                    scope = name
                    directive = part[part.index(after: colon)...]
                }
            }
            guard scope == nil || scope == agent else { continue }
            let name = directive.split(separator: ":", maxSplits: 1).first.map { $0.trimmingWhitespace.lowercased() } ?? ""
            if optOutDirectives.contains(name) { return true }
        }
        return false
    }
}
