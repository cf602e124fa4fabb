/// img2dataset's command line in imgfetch's words: an img2dataset user's first try
/// (`imgfetch --url_list laion.parquet --image_size 256 --processes_count 4 …`) is answered with
/// the whole imgfetch command that does the same, and what was left out and why, rather than one
/// unknown option per run. Its options (1.47's `download()`, docs/DATASETS.md's table) are also
/// where `Suggestion` finds imgfetch's name for one of them.
enum Img2datasetCommandLine {
    /// What one of img2dataset's options becomes.
    enum Rule: Sendable {
        /// `--ours VALUE`, the value renamed by `values`; a value in `defaults` is imgfetch's default, and is dropped.
        case option(String, values: [String: String] = [:], defaults: Set<String> = [])
        /// The list: an argument.
        case list
        /// `True` (or nothing after it): `--ours`; `False`: nothing.
        case flag(String)
        /// `["COLUMN","ALGORITHM"]`: `--verify-hash COLUMN[:ALGORITHM]`.
        case verifyHash
        /// Nothing: imgfetch needs none, for this reason.
        case notNeeded(String)
        /// Nothing: imgfetch does not do it.
        case notSupported(String)
    }

    static let rules: [String: Rule] = [
        "url_list": .list,
        "image_size": .option("resize"),
        "output_folder": .option("output-dir"),
        "processes_count": .notNeeded("one process runs the transfers (-j) and the decodes, on every core"),
        "resize_mode": .option("fit", values: ["border": "pad", "keep_ratio": "keep-ratio", "center_crop": "center-crop",
                                               "keep_ratio_largest": "keep-ratio-largest"]),
        "resize_only_if_bigger": .flag("no-upscale"),
        "upscale_interpolation": .notSupported("imgfetch enlarges with one filter, bilinear"),
        "downscale_interpolation": .notSupported("imgfetch shrinks with one filter, INTER_AREA's (after the JPEG decoder's half-size scaling)"),
        "encode_quality": .option("quality", defaults: ["95"]),
        "encode_format": .option("save-as", values: ["jpg": "jpeg"]),
        "skip_reencode": .notNeeded("without --save-as the original bytes are kept"),
        "output_format": .option("output-format", defaults: ["files"]),
        "input_format": .option("input-format", values: ["json": "jsonl"]),
        "url_col": .option("url-column", defaults: ["url"]),
        "caption_col": .option("caption-column"),
        "bbox_col": .notSupported("imgfetch blurs no bounding boxes"),
        "thread_count": .option("concurrency"),
        "number_sample_per_shard": .option("shard-samples"),
        "extract_exif": .flag("extract-exif"),
        "save_additional_columns": .notNeeded("every column of the table goes into each sample's JSON"),
        "timeout": .option("timeout"),
        "enable_wandb": .notSupported("progress goes to stderr, counts to the stats files"),
        "wandb_project": .notSupported("progress goes to stderr, counts to the stats files"),
        "oom_shard_count": .notNeeded("shard numbers have six digits"),
        "compute_hash": .option("hash", defaults: ["sha256", "None"]),
        "verify_hash": .verifyHash,
        "distributor": .notNeeded("on Spark use Scripts/spark-fetch, elsewhere --shard K/N"),
        "subjob_size": .notNeeded("on Spark use Scripts/spark-fetch, elsewhere --shard K/N"),
        "retries": .option("retries"),
        "disable_all_reencoding": .notNeeded("without --save-as the original bytes are kept"),
        "min_image_size": .option("min-size", defaults: ["0"]),
        "max_image_area": .option("max-pixels", defaults: ["inf"]),
        "max_aspect_ratio": .option("max-aspect-ratio", defaults: ["inf"]),
        "incremental_mode": .notNeeded("a re-run always skips the shards that are complete"),
        "max_shard_retry": .notNeeded("a re-run makes the shards that are not complete; --retries retries each item"),
        "user_agent_token": .notNeeded("imgfetch sends its own User-Agent, with a contact URL; --user-agent replaces it whole"),
        "disallowed_header_directives": .notNeeded("X-Robots-Tag opt-outs are honoured; --ignore-opt-out turns that off"),
    ]

    /// imgfetch's option for img2dataset's `name` (`image_size` or `image-size`), if there is one.
    static func counterpart(of name: String) -> String? {
        switch rules[name.replacing("-", with: "_")] {
        case .option(let ours, _, _)?, .flag(let ours)?: ours
        case .verifyHash?: "verify-hash"
        case .list?, .notNeeded?, .notSupported?, nil: nil
        }
    }

    /// Why imgfetch has no option like img2dataset's `name`, said as the command line says it
    /// (`imgfetch needs none: …`, `imgfetch does not support it: …`); nil when it has one, or
    /// `name` is not img2dataset's.
    static func reasonLeftOut(_ name: String) -> String? {
        switch rules[name.replacing("-", with: "_")] {
        case .notNeeded(let reason)?: "imgfetch needs none: " + reason
        case .notSupported(let reason)?: "imgfetch does not support it: " + reason
        case .list?: "imgfetch needs none: give the list as an argument"
        default: nil
        }
    }

    struct Translation: Equatable {
        /// The first of img2dataset's options on the command line, as typed.
        var first: String
        /// imgfetch's arguments.
        var arguments: [String] = []
        /// img2dataset's defaults that imgfetch does not share, spelled out.
        var defaults: [String] = []
        /// What was left out: `--processes_count 4: one process runs …`.
        var leftOut: [String] = []
    }

    /// imgfetch's arguments for an img2dataset command line: one with two or more of img2dataset's
    /// options as img2dataset spells them (`--image_size`; `--timeout` is imgfetch's too). With
    /// one, nil: that is imgfetch's command line with a slip, which the parser answers.
    static func translate(_ arguments: [String]) -> Translation? {
        func split(_ argument: String) -> (name: String, value: String?)? {
            guard argument.hasPrefix("--"), argument.count > 2 else { return nil }
            let body = argument.dropFirst(2)
            guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
            return (String(body[..<equals]), String(body[body.index(after: equals)...]))
        }
        let theirs = arguments.filter { argument in
            split(argument).map { rules[$0.name] != nil && OptionTable.byLongName[$0.name] == nil } ?? false
        }
        guard let first = theirs.first, Set(theirs.compactMap { split($0)?.name }).count >= 2 else { return nil }
        var translation = Translation(first: String(first.prefix { $0 != "=" }))
        var given: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard let (name, inline) = split(argument), let rule = rules[name], OptionTable.byLongName[name] == nil else {
                translation.arguments.append(argument)
                continue
            }
            var value = inline
            if value == nil, index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            }
            given[name] = value ?? "True"
            switch rule {
            case .list:
                if let value { translation.arguments.append(value) }
            case .option(let ours, let values, let defaults):
                guard let value, !defaults.contains(value) else { continue }
                translation.arguments += ["--" + ours, values[value] ?? value]
            case .flag(let ours):
                if (value ?? "True").lowercased() == "true" { translation.arguments.append("--" + ours) }
            case .verifyHash:
                let parts = (value ?? "").split { "[]\"', ".contains($0) }.map(String.init)
                guard let column = parts.first else { continue }
                let algorithm = parts.count > 1 ? parts[1] : column
                translation.arguments += ["--verify-hash", algorithm == column ? column : column + ":" + algorithm]
            case .notNeeded(let reason), .notSupported(let reason):
                translation.leftOut.append("--" + name + (value.map { " " + $0 } ?? "") + ": " + reason)
            }
        }
        // What img2dataset does without being asked: shrink to 256, bordered; EXIF in each sample.
        let dataset = given["output_format"] == "webdataset"
        if given["resize_mode"] != "no" {
            if given["image_size"] == nil { translation.defaults += ["--resize", "256"] }
            if given["resize_mode"] == nil { translation.defaults += ["--fit", "pad"] }
            if !dataset && given["encode_format"] == nil { translation.defaults += ["--save-as", "jpeg"] }
        } else if let size = translation.arguments.firstIndex(of: "--resize") {
            translation.arguments.removeSubrange(size...size + 1)
        }
        if let fit = translation.arguments.firstIndex(of: "--fit"), translation.arguments[fit + 1] == "no" {
            translation.arguments.removeSubrange(fit...fit + 1)
        }
        if dataset && given["extract_exif"] == nil { translation.defaults.append("--extract-exif") }
        return translation
    }

    /// What the command line prints for `translation`: imgfetch's command, the defaults it spells
    /// out, and what it left out.
    static func message(_ translation: Translation) -> String {
        var lines = ["'\(translation.first)' is img2dataset's; the same in imgfetch's words:",
                     "  imgfetch " + SecretRedactor.shellWords(translation.arguments + translation.defaults)]
        if !translation.defaults.isEmpty {
            lines.append("  (with img2dataset's defaults spelled out: " + SecretRedactor.shellWords(translation.defaults) + ")")
        }
        for item in translation.leftOut { lines.append("  left out: " + item) }
        lines.append("  (docs/DATASETS.md, \"Coming from img2dataset\", has every option)")
        return lines.joined(separator: "\n")
    }
}
