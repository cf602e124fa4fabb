/// What the parser does with an option, split by whether it takes a value so each `apply` switch is
/// exhaustive. Its spellings, help and value kind are in `OptionTable`.
enum Option: Hashable, Sendable {
    /// Options that stand alone.
    enum Flag: Hashable, Sendable, CaseIterable {
        case fifo, lifo, insecure, allowDowngrade, overwrite, skipExisting, quiet, jsonl, noDecode, requireVerified, ignoreOptOut, robots
        case upscale, failuresAreData
        case http1_1, http2, help, version, manPage
    }

    /// Options that take exactly one value.
    enum Valued: Hashable, Sendable, CaseIterable {
        case outputDirectory, concurrency, perHost, timeout, connectTimeout, maxTime, retries, ratePerHost, hostFailures, deadline
        case header, userAgent, user, cookieJar, caCertificate, resolve, maxSize, minFree, name, progress, progressInterval, report, gallery
        case saveAs, maxDimension, resize, fit, padColor, quality, maxPixels, cachePolicy, completions, inputFormat, urlColumn, captionColumn
        case keyColumn, outputFormat, shardSamples, shardPrefix, shard, shardBy, workDirectory
    }

    case flag(Flag)
    case valued(Valued)
}
