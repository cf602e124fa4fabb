/// What one requested output needs, decided before any request.
enum CachePlan: Equatable {
    /// An unindexed file is already at the final path, and `--skip-existing` keeps it.
    case keepExisting(name: String)
    /// No request: the output comes from `source`, an indexed file that still has its size.
    case serve(CacheEntry, source: String, outcome: CacheOutcome)
    /// Ask the server with the entry's validators; on 304 the output comes from `source`.
    case revalidate(CacheEntry, source: String)
    /// Download in full. Files that `owner` (the URL's entry) indexed may be replaced.
    case download(owner: CacheEntry?)
    /// `only-if-cached`, and nothing usable is indexed.
    case missing
    /// `only-if-cached`, and the indexed response is stale and marked no-cache or must-revalidate.
    case mustRevalidate

    /// Whether serving the plan reads or writes files (`missing` and `mustRevalidate` are failures
    /// made from the plan alone).
    var touchesFiles: Bool {
        switch self {
        case .missing, .mustRevalidate: false
        case .keepExisting, .serve, .revalidate, .download: true
        }
    }

    /// Whether the plan makes a request.
    var needsRequest: Bool {
        switch self {
        case .revalidate, .download: true
        case .keepExisting, .serve, .missing, .mustRevalidate: false
        }
    }

    /// The URL's index entry as the plan found it: its files may be replaced, and a 304 confirms
    /// it. Nil for a URL the index does not know, and for plans made without the index.
    var entry: CacheEntry? {
        switch self {
        case .serve(let entry, _, _), .revalidate(let entry, _): entry
        case .download(let owner): owner
        case .keepExisting, .missing, .mustRevalidate: nil
        }
    }

    /// The indexed file that a 304 serves from: only a revalidation has one.
    var source: String? {
        if case .revalidate(_, let source) = self { source } else { nil }
    }

    /// The engine's request for `url`: conditional (the entry's validators, sent to the URL its
    /// response came from) when the plan revalidates; with `digests` of the body taken as it arrives.
    func request(for url: ParsedURL, priority: RequestPriority, digests: [DigestAlgorithm]) -> TransferRequest {
        var request = TransferRequest(url: url, priority: priority, digests: digests)
        if case .revalidate(let entry, _) = self {
            request.conditionalHeaders = entry.headers.validators
            request.conditionalURL = entry.finalURL
        }
        return request
    }
}

/// Decides `CachePlan`s: `--cache-policy` and `--skip-existing`/`--overwrite` over the URL's index
/// entry and the files on disk.
struct CachePlanner {
    var policy: CachePolicy
    /// `CacheEntry.outputKind` of this run: entries of another kind are not reused.
    var kind: String
    /// This run verifies images: an entry saved without verification (`--no-decode`) is not reused.
    var verifies: Bool
    var existingFiles: ExistingFilePolicy
    /// The stamp of the regular file `name` in the output directory, or nil when there is none.
    var fileStamp: @Sendable (String) -> FileStamp?
    /// `DownloaderConfiguration.freshSince`.
    var freshSince: Double?

    /// Fresh as HTTP says, or received since `freshSince` (a run this one waited for fetched it).
    private func isFresh(_ entry: CacheEntry, now: Double) -> Bool {
        if let since = freshSince, entry.freshness.responseTime >= since, !entry.directives.noCache { return true }
        return entry.isFresh(now: now)
    }

    /// - Parameters:
    ///   - wantedName: the output's file name once the format is known.
    ///   - possibleNames: the names to look for when the format is not known (no usable entry).
    func plan(entry: CacheEntry?, wantedName: (ImageFormat) -> String, possibleNames: [String], now: Double) -> CachePlan {
        guard let entry, isUsable(entry) else {
            let owned = Set(entry?.files.map(\.name) ?? [])
            if existingFiles == .skip,
               let existing = possibleNames.first(where: { !owned.contains($0) && fileStamp($0) != nil }) {
                return .keepExisting(name: existing)
            }
            return policy == .onlyIfCached ? .missing : .download(owner: entry)
        }
        let wanted = wantedName(entry.format)
        if existingFiles == .skip, !entry.owns(wanted), fileStamp(wanted) != nil {
            // The name is taken by another file. When this URL's own file is in the index under
            // another name (an earlier run gave the name to another URL and this one a side name),
            // that file is the one kept, not the other URL's.
            if let own = entry.files.first(where: { $0.matches(fileStamp($0.name)) }) { return .keepExisting(name: own.name) }
            return .keepExisting(name: wanted)
        }
        // The wanted file itself is the best source; any other indexed copy of the body will do.
        let candidates = entry.files.filter { $0.name == wanted } + entry.files.filter { $0.name != wanted }
        guard let source = candidates.first(where: { $0.matches(fileStamp($0.name)) })?.name else {
            return policy == .onlyIfCached ? .missing : .download(owner: entry)
        }
        switch policy {
        case .reload:
            return .download(owner: entry)
        case .onlyIfCached:
            if entry.isFresh(now: now) { return .serve(entry, source: source, outcome: .fresh) }
            // no-cache and must-revalidate forbid serving a stale response without asking (RFC 9111 §5.2.2).
            let directives = entry.directives
            return directives.noCache || directives.mustRevalidate
                ? .mustRevalidate : .serve(entry, source: source, outcome: .stale)
        case .protocol:
            if isFresh(entry, now: now) { return .serve(entry, source: source, outcome: .fresh) }
            return entry.hasValidators ? .revalidate(entry, source: source) : .download(owner: entry)
        }
    }

    private func isUsable(_ entry: CacheEntry) -> Bool {
        guard entry.kind == kind else { return false }
        let decodable = entry.format.isDecodable
        return !verifies || !decodable || entry.image?.verified == true
    }
}
