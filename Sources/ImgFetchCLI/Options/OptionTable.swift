import ImgFetchCore

/// Every option imgfetch knows, in groups, in `--help all` order: the one place options are declared.
///
/// The parser takes its spellings from here; `HelpText`, `ManPage` and the completion scripts are
/// generated from it; a test checks the README's option table against it.
enum OptionTable {
    /// Declared apart: one more option in the Images group's literal is past what the type checker takes.
    private static let maxDecodeMemory: OptionSpec = .value(
        "max-decode-memory", "BYTES", .number, default: "256M",
        help: "most memory one image's decode may need, as its header says (progressive JPEG, animations, whole-image "
            + "rasters); an image that needs more fails as too-large before decoding; suffixes k, M, G") {
        options, value, spelling throws(UsageError) in
        options.maxDecodeMemory = Int(try ValueParser.byteCount(value, for: spelling))
    }

    static let groups: [OptionGroup] = [inputGroup, outputGroup, imagesGroup, transfersGroup, requestsGroup, reportingGroup, datasetsGroup, clusterGroup, informationGroup]

    private static let inputGroup = OptionGroup("Input", topic: "input", [
        .choice("input-format", "FORMAT", \.table.format, default: "by name",
                help: "how lists are read; txt: a URL per line with out= and priority=; csv (RFC 4180) or tsv: a table "
                    + "with a header row; jsonl: a JSON object per line; parquet: an Apache Parquet table (a file, or a "
                    + "directory of part files); a table's columns go into each item's JSON result; by default a list's "
                    + "name says (.csv, .tsv, .jsonl or .ndjson, .parquet; any other: txt)").common(),
        .value("url-column", "NAME", .text, default: "url",
               help: "with a table (csv, tsv, jsonl, parquet): the column that holds the URLs") {
            options, value, spelling throws(UsageError) in
            options.table.urlColumn = try ValueParser.columnName(value, for: spelling)
        }.common(),
        .value("caption-column", "NAME", .text,
               help: "with a table: the column that holds each image's caption") {
            options, value, spelling throws(UsageError) in
            options.table.captionColumn = try ValueParser.columnName(value, for: spelling)
        }.common(),
        .value("key-column", "NAME", .text,
               help: "with webdataset and a table: the column of each sample's key (unique, no '.' or '/')") {
            options, value, spelling throws(UsageError) in
            options.table.keyColumn = try ValueParser.columnName(value, for: spelling)
        },
        .value("column-type", "NAME=TYPE", .text,
               help: "with csv or tsv: pass column NAME through as TYPE (int, float, bool or string) instead of "
                   + "text, as Parquet and JSON Lines keep theirs; repeatable") {
            options, value, spelling throws(UsageError) in
            guard let equals = value.lastIndex(of: "="), equals != value.startIndex else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected NAME=TYPE, such as similarity=float"))
            }
            let name = try ValueParser.columnName(String(value[..<equals]), for: spelling)
            options.table.columnTypes[name] = try ValueParser.choice(String(value[value.index(after: equals)...]), for: spelling)
        },
    ])

    private static let outputGroup = OptionGroup("Output", topic: "output", [
        .value("output-dir", short: "o", "DIR", .directory, default: ".",
               help: "where images go, created if missing; s3://BUCKET/PREFIX uploads each finished file or "
                   + "shard there (credentials, region and endpoint from the AWS_* environment)") {
            options, value, spelling throws(UsageError) in
            try options.setOutput(value, spelling: spelling)
        }.common(),
        .value("work-dir", "DIR", .directory,
               help: "local scratch for the cache index (default DIR/.imgfetch); with -o s3://…, also where "
                   + "files are made before their upload (default $TMPDIR/imgfetch-s3/BUCKET/PREFIX)") {
            options, value, spelling throws(UsageError) in
            options.workDirectory = try ValueParser.path(value, for: spelling)
        },
        .choice("name", "url|hash", \.naming, expected: "expected 'url' or 'hash'", default: "url",
                help: "file names from the URL's last path segment, or from its SHA-256"),
        .flag("overwrite", help: "replace files that already exist (not the cache's: a file indexed for its URL is "
                  + "revalidated; --cache-policy reload downloads again)") { $0.existingFiles = .overwrite }.common(),
        .flag("skip-existing", default: .selected, help: "keep files that already exist") {
            $0.existingFiles = .skip
        },
        .choice("if-running", "WHAT", \.ifRunning, default: "wait",
                help: "when another imgfetch run is writing the same output (or --work-dir): wait for it to end, "
                    + "then go on (its work is then done), or skip: exit 75 at once (for cron)"),
        .choice("cache-policy", "POLICY", \.cachePolicy, default: "protocol",
                help: "how the cache index (DIR/.imgfetch, or in --work-dir) is used; protocol: reuse indexed files while fresh, "
                    + "revalidate stale ones with ETag/Last-Modified; reload: always download; "
                    + "only-if-cached: no requests"),
    ])

    private static let imagesGroup = OptionGroup("Images", topic: "images", [
        .choice("save-as", "FORMAT", \.saveAs, default: "original",
                help: "what is written; original: the verified bytes; png, ppm, pam, jpeg or webp: the decompressed "
                    + "pixels of the first frame, EXIF orientation applied, in png and pam with the source's channels and "
                    + "bit depth, in jpeg 8-bit with alpha composited onto --background, in webp 8-bit lossy with alpha").common(),
        .value("resize", "N", .number,
               help: "with a pixel --save-as (a dataset's is jpeg unless given): size the image to N pixels as --fit "
                   + "says (EXIF orientation first)") {
            options, value, spelling throws(UsageError) in
            options.resize = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        }.common(),
        .choice("fit", "MODE", \.fit, expected: "expected " + Resize.Fit.allCases.map(\.rawValue).joined(separator: ", "),
                default: "keep-ratio-largest",
                help: "how --resize applies; keep-ratio: the shorter side becomes N; keep-ratio-largest: the longer "
                    + "side becomes N; center-crop: an NxN crop of the keep-ratio image; pad: NxN, the "
                    + "keep-ratio-largest image centered on --background").common(),
        .flag("upscale", help: "with --resize in files mode: also enlarge images smaller than N (bilinear); "
                  + "a dataset enlarges by default, so that every sample has the size asked for") { $0.upscale = true },
        .flag("no-upscale", help: "with --resize in a dataset: never enlarge (a small image keeps its size)") {
            $0.upscale = false
        },
        .value("background", "RRGGBB", .text, default: "ffffff",
               help: "the color behind transparent pixels and around a padded image; in hex, white as img2dataset "
                   + "and most thumbnailers flatten; with a pixel --save-as (jpeg flattens onto it, --fit pad fills with it)") {
            options, value, spelling throws(UsageError) in
            options.background = try ValueParser.color(value, for: spelling)
        },
        .value("max-dimension", "N", .number,
               help: "with a pixel --save-as: shrink so the longer side is at most N pixels (--resize N)") {
            options, value, spelling throws(UsageError) in
            options.maxDimension = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        },
        .value("quality", "Q", .number,
               help: "with --save-as jpeg or webp: the quality, 1-100 (JPEG 95, WebP 90 when not given)") {
            options, value, spelling throws(UsageError) in
            options.quality = try ValueParser.integer(value, in: 1...100, for: spelling)
        },
        .flag("no-decode", help: "skip full decoding; bodies are still checked by their magic bytes") {
            $0.noDecode = true
        },
        .flag("require-verified",
              help: "fail images imgfetch cannot decode (SVG, ICO, JPEG XL, HEIC) instead of saving them unverified") {
            $0.requireVerified = true
        },
        .value("min-size", "N", .number,
               help: "keep only images whose shorter side is at least N pixels; smaller ones fail (class too-small) "
                   + "from their header, undecoded (0: no limit)") {
            options, value, spelling throws(UsageError) in
            options.filter.minSide = try ValueParser.integer(value, in: 0...1_000_000, for: spelling)
        },
        .value("max-aspect-ratio", "R", .number,
               help: "keep only images whose longer side is at most R times the shorter (3, 2.5); others fail "
                   + "(class aspect-ratio; inf: no limit)") {
            options, value, spelling throws(UsageError) in
            options.filter.maxAspectRatio = try ValueParser.ratio(value, for: spelling)
        },
        .value("max-pixels", "N", .number, default: .value(String(DecodeLimits().maxPixels)),
               help: "largest width x height decoded") {
            options, value, spelling throws(UsageError) in
            options.maxPixels = try ValueParser.integer(value, in: 1...Int(Int32.max) * 64, for: spelling)
        },
        maxDecodeMemory,
        .value("max-size", "BYTES", .number, default: "64M",
               help: "largest body accepted; suffixes k, M, G are powers of 1024") {
            options, value, spelling throws(UsageError) in
            options.maxSize = try ValueParser.byteCount(value, for: spelling)
        },
        .value("min-free", "SPACE", .number, default: "64M",
               help: "start no download while the output's disk has under SPACE free (suffixes k, M, G; 0: only a full "
                   + "disk stops downloads); the remaining items fail (class disk-full), exit code 1") {
            options, value, spelling throws(UsageError) in
            options.minimumFree = value == "0" ? 0 : try ValueParser.byteCount(value, for: spelling)
        },
    ])

    private static let transfersGroup = OptionGroup("Transfers", topic: "transfers", [
        .value("concurrency", short: "j", "N", .number, default: "16",
               help: "simultaneous transfers, 1-1024") {
            options, value, spelling throws(UsageError) in
            options.concurrency = try ValueParser.integer(value, in: 1...1024, for: spelling)
        }.common(),
        .value("per-host", "N", .number, default: "6",
               help: "connections per host, 1-1024; an HTTP/2 host runs up to 100 transfers on each") {
            options, value, spelling throws(UsageError) in
            options.perHost = try ValueParser.integer(value, in: 1...1024, for: spelling)
        },
        .flag("fifo", default: .selected, help: "start the oldest pending request first") { $0.order = .fifo },
        .flag("lifo", help: "start the newest pending request first") { $0.order = .lifo }.common(),
        .value("timeout", short: "t", "SEC", .number, default: "15",
               help: "abort a transfer under 1 KB/s for SEC seconds") {
            options, value, spelling throws(UsageError) in
            options.timeout = try ValueParser.seconds(value, for: spelling)
        }.common(),
        .value("connect-timeout", "SEC", .number, default: "10",
               help: "limit on the connect phase") {
            options, value, spelling throws(UsageError) in
            options.connectTimeout = try ValueParser.seconds(value, for: spelling)
        },
        .value("max-time", "SEC", .number, default: "off",
               help: "hard limit on a whole transfer") {
            options, value, spelling throws(UsageError) in
            options.maxTime = try ValueParser.seconds(value, for: spelling)
        },
        .value("retries", "N", .number, default: "2",
               help: "retries of timeouts, resets, 408, 429 and 5xx, with backoff, 0-100") {
            options, value, spelling throws(UsageError) in
            options.retries = try ValueParser.integer(value, in: 0...100, for: spelling)
        },
        .value("rate-per-host", "R", .number, default: "off",
               help: "at most R requests per second to one host; decimals allowed (0.5: one every 2 s)") {
            options, value, spelling throws(UsageError) in
            options.ratePerHost = try ValueParser.rate(value, for: spelling)
        },
        .value("host-failures", "N", .number, default: "5",
               help: "after N connection failures in a row to a host (refused, DNS, TLS, connect timeout), or N "
                   + "429/503 answers in a row, its remaining items fail at once; 0: never") {
            options, value, spelling throws(UsageError) in
            options.hostFailureLimit = try ValueParser.integer(value, in: 0...1_000_000, for: spelling)
        },
        .value("deadline", "SEC", .number, default: "off",
               help: "end the whole run after SEC seconds; running transfers are cancelled, pending items fail "
                   + "(class deadline), exit code 1") {
            options, value, spelling throws(UsageError) in
            options.deadline = try ValueParser.seconds(value, for: spelling)
        },
    ])

    private static let requestsGroup = OptionGroup("Requests", topic: "requests", [
        .value("header", short: "H", "'K: V'", .text,
               help: "extra request header (repeatable); @FILE reads one per line from FILE, out of sight of ps") {
            options, value, spelling throws(UsageError) in
            options.headers += try ValueParser.headers(value, for: spelling)
        }.common(),
        .value("user-agent", short: "A", "UA", .text, default: "imgfetch/VERSION (+URL)",
               help: "User-Agent header; the default names imgfetch, its version and a contact URL") {
            options, value, spelling throws(UsageError) in
            options.userAgent = try ValueParser.userAgent(value, for: spelling)
        },
        .value("user", short: "u", "USER[:PASS]", .text,
               help: "credentials, sent only to the list's own hosts; the password is masked in ps at once; "
                   + "USER alone asks for it on the terminal") {
            options, value, spelling throws(UsageError) in
            options.credentials = try ValueParser.credentials(value, for: spelling)
        }.common(),
        .flag("netrc", default: "off", help: "credentials from ~/.netrc for the hosts it names, each request's own "
                  + "(a redirect's host gets its entry, or none); -u comes first") { $0.netrcFile = $0.netrcFile ?? "" },
        .value("netrc-file", "FILE", .file, help: "--netrc with FILE instead of ~/.netrc") {
            options, value, spelling throws(UsageError) in
            options.netrcFile = try ValueParser.path(value, for: spelling)
        },
        .value("cookie-jar", "FILE", .file, default: "off",
               help: "read and write cookies in FILE") {
            options, value, spelling throws(UsageError) in
            options.cookieJar = try ValueParser.path(value, for: spelling)
        }.common(),
        .flag("insecure", default: "off", help: "skip TLS certificate verification") { $0.insecure = true },
        .value("cacert", "FILE", .file,
               help: "verify TLS certificates against the CA certificates in FILE (PEM), not the system's") {
            options, value, spelling throws(UsageError) in
            options.caCertificateFile = try ValueParser.path(value, for: spelling)
        },
        .flag("allow-downgrade", default: "off", help: "follow redirects from https to http") {
            $0.allowDowngrade = true
        },
        .flag("http1.1",
              help: "use HTTP/1.1 only (without it: HTTP/2 over TLS when the server offers it, else HTTP/1.1)") {
            $0.httpVersion = .http1_1
        },
        .flag("http2", help: "also offer HTTP/2 on plain http (an h2c upgrade)") { $0.httpVersion = .http2 },
        .value("resolve", "HOST:PORT:ADDR", .text,
               help: "connect to ADDR for HOST:PORT, without DNS (curl's syntax; repeatable)") {
            options, value, spelling throws(UsageError) in
            options.resolve.append(try ValueParser.resolveEntry(value, for: spelling))
        },
        .flag("block-private", default: "off",
              help: "connect to public addresses only; never to loopback, private, link-local, CGNAT, unique-local "
                  + "or multicast ones, checked as connected and at every redirect (class blocked, nothing sent); the "
                  + "cloud metadata address is refused even without it") { $0.addressPolicy.blockPrivate = true },
        .value("allow-host", "HOST|CIDR", .text,
               help: "let HOST (.example.com: its subdomains), an address or a network through --block-private and "
                   + "the metadata refusal (repeatable)") {
            options, value, spelling throws(UsageError) in
            try ValueParser.allowHost(value, into: &options.addressPolicy, for: spelling)
        },
        .flag("robots", default: "off",
              help: "obey robots.txt; each host's is fetched first, and the URLs it disallows for imgfetch are "
                  + "skipped (RFC 9309); off by default, since a list is not a crawl") { $0.robots = true },
        .flag("ignore-opt-out", default: "off",
              help: "fetch images whose X-Robots-Tag opts out; without it a response that says noai, noimageai, "
                  + "noindex, noimageindex or none fails (class opt-out) before its body is read") {
            $0.ignoreOptOut = true
        },
    ])

    private static let reportingGroup = OptionGroup("Reporting", topic: "reporting", [
        .choice("progress", "MODE", \.progress, default: "auto",
                help: "progress on stderr: auto, bar, plain or none; auto is a bar when stderr is a terminal, "
                    + "nothing otherwise").common(),
        .value("progress-interval", "SEC", .number, default: "10",
               help: "seconds between plain status lines") {
            options, value, spelling throws(UsageError) in
            options.progressInterval = try ValueParser.seconds(value, for: spelling)
        },
        .flag("quiet", short: "q",
              help: "only errors and warnings on stderr; no progress, no summary, no line per failed item (its result line says it)") { $0.quiet = true }.common(),
        .flag("verbose", short: "v",
              help: "on a terminal, also a line per item left as it was (already there, fresh in the cache, in a "
                  + "complete shard); without it the summary counts them") { $0.verbose = true },
        .flag("jsonl", help: "stdout gets one JSON object per list item") { $0.jsonl = true }.common(),
        .value("report", "FILE", .file, help: "also write the JSON lines to FILE") {
            options, value, spelling throws(UsageError) in
            options.reportFile = try ValueParser.path(value, for: spelling)
        }.common(),
        .value("gallery", "FILE", .file,
               help: "write an HTML gallery to FILE at the end; thumbnails of the images, the failures by class") {
            options, value, spelling throws(UsageError) in
            options.galleryFile = try ValueParser.path(value, for: spelling)
        }.common(),
    ])

    private static let datasetsGroup = OptionGroup("Datasets", topic: "datasets", [
        .choice("output-format", "FORMAT", \.outputFormat, default: "files",
                help: "what DIR gets; files: a file per image; webdataset: tar shards of samples (the image, its "
                    + "JSON record and caption) in list order, with a results and a stats file per shard").common(),
        .value("shard-samples", "N", .number, default: "10000",
               help: "with --output-format webdataset: rows per shard, 1-1000000") {
            options, value, spelling throws(UsageError) in
            options.shardSamples = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        },
        .value("shard-prefix", "TEXT", .text,
               help: "with webdataset: what shard names and keys start with; "
                   + "letters, digits, '-', '_' (default K-of-N- under --shard, else none)") {
            options, value, spelling throws(UsageError) in
            options.shardPrefix = try ValueParser.shardPrefix(value, for: spelling)
        },
        .choice("hash", "ALGORITHM", \.hash, default: "sha256",
                help: "with webdataset: the hash each sample's JSON records; md5, sha256 or sha512 of the "
                    + "downloaded bytes, under the algorithm's name"),
        .value("verify-hash", "COLUMN[:ALG]", .text,
               help: "with webdataset: check each body against the hex hash in COLUMN; ALG md5, sha256 "
                   + "or sha512 (a column named so says its own; default sha256); a body that differs is not kept "
                   + "(class hash-mismatch)") {
            options, value, spelling throws(UsageError) in
            let verify = try ValueParser.hashColumn(value, for: spelling)
            options.verifyHash = verify
            options.table.hashColumn = verify.column
        },
        .flag("extract-exif", help: "with webdataset: record each image's EXIF in its sample's JSON; \"exif\", "
                  + "a JSON object in a string as img2dataset writes it") { $0.extractExif = true },
        .flag("retry-failed",
              help: "with webdataset: fetch again the rows that failed before; the shards an earlier run completed "
                  + "with failed rows are made again, their other rows fetched again too") { $0.retryFailed = true },
    ])

    private static let clusterGroup = OptionGroup("Cluster", topic: "cluster", [
        .value("shard", "K/N", .text,
               help: "take only the items of shard K of N (0 to N-1), by a stable hash of the URL; without it, "
                   + "JOB_COMPLETION_INDEX and IMGFETCH_SHARD_COUNT (Kubernetes) or SLURM_ARRAY_TASK_* (Slurm) say") {
            options, value, spelling throws(UsageError) in
            options.shard = try ShardSelector.parse(value, for: spelling)
        }.common(),
        .choice("shard-by", "KEY", \.shardBy, default: "url",
                help: "what --shard hashes; url: items spread evenly; host: each host's items in one process"),
        .flag("failures-are-data",
              help: "for cluster workers: exit 0 when items failed (their lines say so), 75 when a retry may help "
                  + "(the output cannot be written, a full disk, a signal), 2 for a usage error; stdin is read to its end") {
            $0.failuresAreData = true
        },
    ])

    private static let informationGroup = OptionGroup("Information", topic: "information", [
        .flag("help", short: "h",
              help: "show the common options and exit; --help all: every option; --help TOPIC: one group "
                  + "(input, output, images, transfers, requests, reporting, datasets, cluster, information)") { $0.action = .help(.brief) },
        .flag("version", help: "show the version and exit") { $0.request(.version) },
        .flag("man", help: "print the man page (roff) and exit") { $0.request(.manPage) },
        .value("completions", "SHELL", .choice(CompletionShell.allCases.map(\.rawValue)),
               help: "print a completion script for SHELL (bash, zsh or fish) and exit") {
            options, value, spelling throws(UsageError) in
            options.request(.completions(try ValueParser.choice(value, for: spelling)))
        },
    ])

    /// Every option, group by group.
    static let options: [OptionSpec] = groups.flatMap(\.options)

    /// What `--` does; it is no option, so it is not in `options`.
    static let endOfOptionsHelp = "end of options; later arguments are lists"

    /// What the option list cannot say one option at a time.
    static let notes = "Short options bundle (-qj4). SEC is seconds, or has a unit (500ms, 5s, 2m, 1h); sizes take k, M "
        + "or G, with or without B or iB, all powers of 1024 (10M = 10MB = 10MiB)."

    static let byLongName: [String: OptionSpec] = Dictionary(uniqueKeysWithValues: options.map { ($0.long, $0) })

    static let byShortName: [Character: OptionSpec] = Dictionary(
        uniqueKeysWithValues: options.compactMap { spec in spec.short.map { ($0, spec) } })
}
