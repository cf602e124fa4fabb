import FoundationEssentials
import Glibc

/// What a transfer's completion needs from the cache decision that started it.
struct CacheContext: Sendable {
    /// The URL's index entry when the transfer started: files it indexed may be replaced, and a
    /// 304 confirms it.
    var entry: CacheEntry?
    /// The indexed file that a 304 serves from; nil for a full download.
    var source: String?
}

/// The cache policy at work: deciding before the request, serving from disk, and keeping the
/// index current after each response.
extension ImageDownloader {
    static func openCacheIndex(_ configuration: DownloaderConfiguration) -> CacheIndex? {
        guard configuration.keepsCacheIndex else { return nil }
        let warn: @Sendable (String) -> Void = configuration.onWarning ?? { _ in }
        do {
            return try CacheIndex(directory: configuration.outputDirectory, warn: warn)
        } catch {
            warn("\(error.message); continuing without the cache (every item is downloaded)")
            return nil
        }
    }

    /// The plan for one output of `key`: serve it from disk, revalidate, or download.
    func cachePlan(key: String, name: OutputName) -> CachePlan {
        let planner = CachePlanner(policy: configuration.cachePolicy, kind: CacheEntry.outputKind(for: configuration),
                                   verifies: configuration.verifyImages, existingFiles: configuration.existingFiles,
                                   fileStamp: fileStamp)
        let possibleNames: [String]
        switch configuration.saveAs {
        case .original: possibleNames = name.possibleFileNames
        case .pixels: possibleNames = [fileName(name, format: .jpeg)]
        }
        return planner.plan(entry: cacheIndex?.entry(for: key), wantedName: { fileName(name, format: $0) },
                            possibleNames: possibleNames, now: Date().timeIntervalSince1970)
    }

    /// Runs `delivery` once the index changes made so far are committed (at once without an
    /// index): a reported result is never missing from the index after a crash.
    func afterIndexCommit(_ delivery: @escaping @Sendable () -> Void) {
        if let cacheIndex { cacheIndex.afterCommit(delivery) } else { delivery() }
    }

    /// The result of an output that needs no request (`CachePlan.keepExisting`, `.serve`,
    /// `.missing`), and whether it changed the index (a copy was placed and indexed).
    func serveWithoutNetwork(_ plan: CachePlan, key: String, name: OutputName) -> (DownloadResult, changedIndex: Bool) {
        switch plan {
        case .keepExisting(let existing):
            return (DownloadResult(status: .skipped, paths: [OutputPaths.join(configuration.outputDirectory, existing)]), false)
        case .serve(let entry, let source, let outcome):
            let result = satisfy(name, from: entry, source: source, outcome: outcome)
            return (result, result.status == .saved)
        case .missing:
            return (.failed(DownloadError(.notCached, "not in the cache index of \(configuration.outputDirectory) "
                + "(--cache-policy only-if-cached makes no requests; run without it to download)")), false)
        case .mustRevalidate:
            return (.failed(DownloadError(.notCached, "stale in the cache index, and the server requires revalidation "
                + "(no-cache or must-revalidate); --cache-policy only-if-cached makes no requests")), false)
        case .revalidate, .download:
            preconditionFailure("a plan that needs a request was served from disk")
        }
    }

    /// The output `name` of an indexed body: the indexed file itself when it is intact, else a
    /// copy of `source` placed under the name (and indexed).
    func satisfy(_ name: OutputName, from entry: CacheEntry, source: String, outcome: CacheOutcome,
                 httpStatus: Int? = nil, attempts: Int = 0) -> DownloadResult {
        let wanted = fileName(name, format: entry.format)
        let path = OutputPaths.join(configuration.outputDirectory, wanted)
        var result = DownloadResult(status: .skipped, paths: [path])
        result.format = entry.format
        result.image = entry.image
        result.cache = outcome
        result.reusedBytes = entry.bodySize
        // Entries of another output kind are never reused: the kind is this configuration's.
        if configuration.saveAs == .original { result.contentHash = entry.contentHash }
        result.httpStatus = httpStatus
        result.attempts = attempts
        if entry.files.contains(where: { $0.name == wanted && $0.matches(fileStamp(wanted)) }) { return result }
        do {
            if try placer.place(.file(at: placer.path(of: source)), as: wanted, indexedNames: entry.fileNames) == .saved {
                result.status = .saved
                if let stamp = fileStamp(wanted) { cacheIndex?.addFile(CacheEntry.File(name: wanted, stamp: stamp), for: entry.url) }
            }
        } catch {
            var failed = DownloadResult.failed(error, attempts: attempts, httpStatus: httpStatus)
            failed.format = entry.format
            return failed
        }
        return result
    }

    /// The stamp of the regular file `name` in the output directory; nil when there is none (a
    /// symlink or directory planted there is not an indexed file).
    func fileStamp(_ name: String) -> FileStamp? {
        var info = stat()
        guard lstat(OutputPaths.join(configuration.outputDirectory, name), &info) == 0,
              (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(size: Int64(info.st_size), inode: UInt64(info.st_ino),
                         modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// A 304 confirmed `context.entry`: update it, then serve every caller of the URL from its files.
    func finishNotModified(key: String, transferID: Int, context: CacheContext, _ revalidation: CacheRevalidation) {
        guard var entry = context.entry, let source = context.source else {
            // Unreachable (only a request with validators is answered 304), but never leave callers waiting.
            let failure = DownloadResult.failed(DownloadError(.http, "HTTP 304 to a request that was not conditional"),
                                                attempts: revalidation.attempts, httpStatus: 304)
            placeForEveryCaller(key: key, transferID: transferID, format: .jpeg, failure: failure, isIndexed: false,
                                replaceableNames: []) { _, _ in failure }
            return
        }
        entry.headers = entry.headers.updated(with: revalidation.cacheHeaders)
        entry.freshness = CacheFreshness(headers: entry.headers, requestTime: revalidation.requestTime,
                                         responseTime: revalidation.responseTime)
        cacheIndex?.refresh(url: key, headers: entry.headers, freshness: entry.freshness)
        var failure = DownloadResult.failed(DownloadError(.filesystem, "no cached file"), attempts: revalidation.attempts,
                                            httpStatus: 304, httpVersion: revalidation.httpVersion)
        failure.format = entry.format
        placeForEveryCaller(key: key, transferID: transferID, format: entry.format, failure: failure, isIndexed: true,
                            replaceableNames: entry.fileNames) { name, _ in
            var result = satisfy(name, from: entry, source: source, outcome: .revalidated, httpStatus: 304, attempts: revalidation.attempts)
            result.httpVersion = revalidation.httpVersion
            return result
        }
    }
}
