import ImgFetchCore

/// Options that are valid alone but not together: refused rather than silently ignored. (Those
/// that depend on the environment too, such as `--shard-by` without a shard, are `RunEnvironment`'s.)
enum OptionCombinations {
    static func check(_ options: CommandLineOptions) throws(UsageError) {
        for (option, given) in [("--max-dimension", options.maxDimension != nil), ("--resize", options.resize != nil)]
        where given && options.saveAs == .original {
            throw UsageError(option: option, problem: .combination(
                "needs a pixel format to write: add --save-as jpeg (or png, ppm, pam, webp); original bytes are saved "
                    + "unchanged, never resized"))
        }
        if options.maxDimension != nil && options.resize != nil {
            throw UsageError(option: "--max-dimension", problem: .combination(
                "cannot be used with --resize: it is --resize N --fit keep-ratio-largest; give one of them"))
        }
        // The defaults (keep-ratio-largest, black) are what --max-dimension does, so they pass unremarked.
        if options.given.contains("upscale") && options.given.contains("no-upscale") {
            throw UsageError(option: "--no-upscale", problem: .combination("cannot be used with --upscale; give one of them"))
        }
        for (option, given) in [("--fit", options.fit != .keepRatioLargest), ("--upscale", options.upscale),
                                ("--no-upscale", options.given.contains("no-upscale")),
                                ] where given && options.resize == nil {
            throw UsageError(option: option, problem: .combination("needs --resize N"))
        }
        if options.background != .white && options.saveAs == .original {
            throw UsageError(option: "--background", problem: .combination(
                "needs a pixel format to flatten or pad: add --save-as jpeg (or png, ppm, pam, webp); original bytes are saved unchanged"))
        }
        if options.quality != nil && options.saveAs != .jpeg && options.saveAs != .webp {
            throw UsageError(option: "--quality", problem: .combination(
                "needs --save-as jpeg or webp: the other outputs are lossless or the original bytes"))
        }
        if !options.table.columnTypes.isEmpty && options.table.format != .csv && options.table.format != .tsv {
            throw UsageError(option: "--column-type", problem: .combination(
                "needs --input-format csv or tsv (Parquet's and JSON Lines' columns keep their own types)"))
        }
        try checkDataset(options)
        if options.requireVerified && options.noDecode {
            throw UsageError(option: "--require-verified", problem: .combination(
                "cannot be used with --no-decode: without decoding nothing is verified"))
        }
    }

    /// Options of WebDataset shards, and the options of files that shards have no use for.
    private static func checkDataset(_ options: CommandLineOptions) throws(UsageError) {
        let defaults = CommandLineOptions()
        guard options.outputFormat == .webdataset else {
            for (option, given) in [("--shard-samples", options.shardSamples != defaults.shardSamples),
                                    ("--shard-prefix", options.shardPrefix != nil),
                                    ("--key-column", options.table.keyColumn != nil)] where given {
                throw UsageError(option: option, problem: .combination("needs --output-format webdataset"))
            }
            for (option, given) in [("--hash", options.given.contains("hash")), ("--verify-hash", options.verifyHash != nil),
                                    ("--extract-exif", options.extractExif)] where given {
                throw UsageError(option: option, problem: .combination(
                    "needs --output-format webdataset: it goes into each sample's JSON"))
            }
            if options.retryFailed {
                throw UsageError(option: "--retry-failed", problem: .combination(
                    "needs --output-format webdataset: with files, a run fetches every item that failed before anyway"))
            }
            return
        }
        for (option, given) in [("--key-column", options.table.keyColumn != nil), ("--verify-hash", options.verifyHash != nil)]
        where given && options.table.format == .txt {
            throw UsageError(option: option, problem: .combination("needs a table: --input-format csv, tsv, jsonl or parquet"))
        }
        let fileOptions = [("--gallery", options.galleryFile != nil, "shards have no image files to show"),
                           ("--name", options.naming != defaults.naming, "samples are named by their key"),
                           ("--overwrite", options.existingFiles != defaults.existingFiles, "a shard is always written whole"),
                           ("--cache-policy", options.cachePolicy != defaults.cachePolicy,
                            "shards keep no cache index; a complete shard is skipped by its stats file")]
        for (option, given, reason) in fileOptions where given {
            throw UsageError(option: option, problem: .combination("cannot be used with --output-format webdataset: \(reason)"))
        }
    }
}
