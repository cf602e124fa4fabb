import FoundationEssentials

/// What a transfer's completion needs from the cache decision that started it.
struct CacheContext: Sendable {
    /// The URL's index entry when the transfer started: files it indexed may be replaced, and a
    /// 304 confirms it.
    var entry: CacheEntry?
    /// The indexed file that a 304 serves from; nil for a full download.
    var source: String?

    /// The engine's request for `url`: conditional (the entry's validators, sent to the URL its
    /// response came from) when the transfer revalidates; with the body's SHA-256 taken when
    /// `digest` says so (see `ImageDownloader.digestsBody`).
    func request(for url: ParsedURL, priority: RequestPriority, digest: Bool) -> TransferRequest {
        var request = TransferRequest(url: url, priority: priority, digestsBody: digest)
        if source != nil, let entry {
            request.conditionalHeaders = entry.headers.validators
            request.conditionalURL = entry.finalURL
        }
        return request
    }
}

/// The cache index and the decisions taken from it before any request.
struct CacheLookup: Sendable {
    let index: CacheIndex?
    let planner: CachePlanner

    /// Opens the output directory's index, unless the configuration keeps none; a failure to open
    /// it is a warning, and the run goes on without one. `onCommitted` hears of every commit.
    static func openIndex(_ configuration: DownloaderConfiguration, diskSpace: DiskSpaceGuard,
                          onCommitted: @escaping @Sendable (UInt64) -> Void) -> CacheIndex? {
        guard configuration.keepsCacheIndex && !configuration.handsOverOutputs else { return nil }
        let warn: @Sendable (String) -> Void = configuration.onWarning ?? { _ in }
        do {
            return try CacheIndex(directory: configuration.indexDirectory ?? configuration.outputDirectory, warn: warn,
                                  diskSpace: diskSpace, onCommitted: onCommitted)
        } catch {
            warn("\(error.message); continuing without the cache (every item is downloaded)")
            return nil
        }
    }

    init(index: CacheIndex?, configuration: DownloaderConfiguration, placer: OutputPlacer) {
        self.index = index
        planner = CachePlanner(policy: configuration.cachePolicy, kind: CacheEntry.outputKind(for: configuration),
                               verifies: configuration.verifyImages, existingFiles: configuration.existingFiles,
                               fileStamp: { placer.stamp(of: $0) })
    }

    /// The plan for one output of `key`: serve it from disk, revalidate, or download.
    /// - Parameters:
    ///   - wantedName: the output's file name once the format is known.
    ///   - possibleNames: the names to look for when the format is not known.
    func plan(key: String, wantedName: (ImageFormat) -> String, possibleNames: [String]) -> CachePlan {
        planner.plan(entry: index?.entry(for: key), wantedName: wantedName, possibleNames: possibleNames,
                     now: Date().timeIntervalSince1970)
    }
}
