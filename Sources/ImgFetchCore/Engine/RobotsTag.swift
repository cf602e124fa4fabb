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

    /// Whether one field value opts out for `agent` (a lowercase product token).
    static func optsOut(_ value: String, agent: String) -> Bool {
        var directives = Substring(value)
        if let colon = value.firstIndex(of: ":") {
            let scope = value[..<colon].trimmingWhitespace.lowercased()
            let isAgent = !scope.isEmpty && !scope.contains(where: { $0 == "," || $0 == " " || $0 == "\t" })
                && !valuedDirectives.contains(scope) && !optOutDirectives.contains(scope)
            if isAgent {
                guard scope == agent else { return false }
                directives = value[value.index(after: colon)...]
            }
        }
        return directives.split(separator: ",").contains { directive in
            let name = directive.split(separator: ":", maxSplits: 1).first.map { $0.trimmingWhitespace.lowercased() } ?? ""
            return optOutDirectives.contains(name)
        }
    }
}
