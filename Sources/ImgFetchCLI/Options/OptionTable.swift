import ImgFetchCore

/// Every option imgfetch knows, in `--help` order: the one place options are declared.
///
/// The parser takes its spellings from here; `HelpText`, `ManPage` and the completion scripts are
/// generated from it; a test checks the README's option table against it.
enum OptionTable {
    static let options: [OptionSpec] = [
        .valued(.outputDirectory, "output-dir", short: "o", "DIR", .directory, default: ".",
                help: "where images go, created if missing; s3://BUCKET/PREFIX uploads each finished file or "
                    + "shard there (credentials, region and endpoint from the AWS_* environment)"),
        .valued(.workDirectory, "work-dir", "DIR", .directory,
                help: "local scratch for the cache index (default DIR/.imgfetch); with -o s3://…, also where "
                    + "files are made before their upload (default $TMPDIR/imgfetch-s3/BUCKET/PREFIX)"),
        .valued(.inputFormat, "input-format", "FORMAT", .choice(InputFormat.allCases.map(\.rawValue)), default: "txt",
                help: "how lists are read; txt: a URL per line with out= and priority=; csv (RFC 4180) or tsv: a table "
                    + "with a header row; jsonl: a JSON object per line; a table's columns go into each item's JSON result"),
        .valued(.urlColumn, "url-column", "NAME", .text, default: "url",
                help: "with csv, tsv or jsonl: the column that holds the URLs"),
        .valued(.captionColumn, "caption-column", "NAME", .text,
                help: "with csv, tsv or jsonl: the column that holds each image's caption"),
        .valued(.keyColumn, "key-column", "NAME", .text,
                help: "with webdataset and a table: the column of each sample's key (unique, no '.' or '/')"),
        .valued(.outputFormat, "output-format", "FORMAT", .choice(OutputFormat.allCases.map(\.rawValue)), default: "files",
                help: "what DIR gets; files: a file per image; webdataset: tar shards of samples (the image, its "
                    + "JSON record and caption) in list order, with a results and a stats file per shard"),
        .valued(.shardSamples, "shard-samples", "N", .number, default: "10000",
                help: "with --output-format webdataset: rows per shard, 1-1000000"),
        .valued(.shardPrefix, "shard-prefix", "TEXT", .text,
                help: "with webdataset: what shard names and keys start with; "
                    + "letters, digits, '-', '_' (default K-of-N- under --shard, else none)"),
        .valued(.shard, "shard", "K/N", .text,
                help: "take only the items of shard K of N (0 to N-1), by a stable hash of the URL; without it, "
                    + "JOB_COMPLETION_INDEX and IMGFETCH_SHARD_COUNT (Kubernetes) or SLURM_ARRAY_TASK_* (Slurm) say"),
        .valued(.shardBy, "shard-by", "KEY", .choice(ShardSelector.Key.allCases.map(\.rawValue)), default: "url",
                help: "what --shard hashes; url: items spread evenly; host: each host's items in one process"),
        .flag(.failuresAreData, "failures-are-data",
              help: "for cluster workers: exit 0 when items failed (their lines say so), 75 when a retry may help "
                  + "(the output cannot be written, a full disk, a signal), 2 for a usage error; stdin is read to its end"),
        .valued(.concurrency, "concurrency", short: "j", "N", .number, default: "16",
                help: "simultaneous transfers, 1-1024"),
        .valued(.perHost, "per-host", "N", .number, default: "6",
                help: "connections per host, 1-1024; an HTTP/2 host runs up to 100 transfers on each"),
        .flag(.fifo, "fifo", default: .selected, help: "start the oldest pending request first"),
        .flag(.lifo, "lifo", help: "start the newest pending request first"),
        .valued(.timeout, "timeout", short: "t", "SEC", .number, default: "15",
                help: "abort a transfer under 1 KB/s for SEC seconds"),
        .valued(.connectTimeout, "connect-timeout", "SEC", .number, default: "10",
                help: "limit on the connect phase"),
        .valued(.maxTime, "max-time", "SEC", .number, default: "off",
                help: "hard limit on a whole transfer"),
        .valued(.retries, "retries", "N", .number, default: "2",
                help: "retries of timeouts, resets, 408, 429 and 5xx, with backoff, 0-100"),
        .valued(.ratePerHost, "rate-per-host", "R", .number, default: "off",
                help: "at most R requests per second to one host; decimals allowed (0.5: one every 2 s)"),
        .valued(.hostFailures, "host-failures", "N", .number, default: "5",
                help: "after N connection failures in a row to a host (refused, DNS, TLS, connect timeout), or N "
                    + "429/503 answers in a row, its remaining items fail at once; 0: never"),
        .valued(.deadline, "deadline", "SEC", .number, default: "off",
                help: "end the whole run after SEC seconds; running transfers are cancelled, pending items fail "
                    + "(class deadline), exit code 1"),
        .flag(.ignoreOptOut, "ignore-opt-out", default: "off",
              help: "fetch images whose X-Robots-Tag opts out; without it a response that says noai, noimageai, "
                  + "noindex, noimageindex or none fails (class opt-out) before its body is read"),
        .flag(.robots, "robots", default: "off",
              help: "obey robots.txt; each host's is fetched first, and the URLs it disallows for imgfetch are "
                  + "skipped (RFC 9309); off by default, since a list is not a crawl"),
        .valued(.header, "header", short: "H", "'K: V'", .text,
                help: "extra request header (repeatable)"),
        .valued(.userAgent, "user-agent", short: "A", "UA", .text, default: "imgfetch/VERSION (+URL)",
                help: "User-Agent header; the default names imgfetch, its version and a contact URL"),
        .valued(.user, "user", short: "u", "USER:PASS", .text,
                help: "credentials, sent only to the list's own hosts"),
        .valued(.cookieJar, "cookie-jar", "FILE", .file, default: "off",
                help: "read and write cookies in FILE"),
        .flag(.insecure, "insecure", default: "off", help: "skip TLS certificate verification"),
        .valued(.caCertificate, "cacert", "FILE", .file,
                help: "verify TLS certificates against the CA certificates in FILE (PEM), not the system's"),
        .flag(.allowDowngrade, "allow-downgrade", default: "off", help: "follow redirects from https to http"),
        .flag(.http1_1, "http1.1",
              help: "use HTTP/1.1 only (without it: HTTP/2 over TLS when the server offers it, else HTTP/1.1)"),
        .flag(.http2, "http2", help: "also offer HTTP/2 on plain http (an h2c upgrade)"),
        .valued(.resolve, "resolve", "HOST:PORT:ADDR", .text,
                help: "connect to ADDR for HOST:PORT, without DNS (curl's syntax; repeatable)"),
        .valued(.saveAs, "save-as", "FORMAT", .choice(SaveAsChoice.allCases.map(\.rawValue)), default: "original",
                help: "what is written; original: the verified bytes; png, ppm, pam, jpeg or webp: the decompressed "
                    + "pixels of the first frame, EXIF orientation applied, in png and pam with the source's channels and "
                    + "bit depth, in jpeg 8-bit with alpha composited onto black, in webp 8-bit lossy with alpha"),
        .valued(.resize, "resize", "N", .number,
                help: "with a pixel --save-as: size the image to N pixels as --fit says (EXIF orientation first)"),
        .valued(.fit, "fit", "MODE", .choice(Resize.Fit.allCases.map(\.rawValue)), default: "keep-ratio-largest",
                help: "how --resize applies; keep-ratio: the shorter side becomes N; keep-ratio-largest: the longer "
                    + "side becomes N; center-crop: an NxN crop of the keep-ratio image; pad: NxN, the "
                    + "keep-ratio-largest image centered on --pad-color"),
        .flag(.upscale, "upscale", help: "with --resize: also enlarge images smaller than N (bilinear)"),
        .valued(.padColor, "pad-color", "RRGGBB", .text, default: "000000",
                help: "with --fit pad: the color around the image, in hex"),
        .valued(.maxDimension, "max-dimension", "N", .number,
                help: "with a pixel --save-as: shrink so the longer side is at most N pixels (--resize N)"),
        .valued(.quality, "quality", "Q", .number,
                help: "with --save-as jpeg or webp: the quality, 1-100 (JPEG 95, WebP 90 when not given)"),
        .flag(.noDecode, "no-decode", help: "skip full decoding; bodies are still checked by their magic bytes"),
        .flag(.requireVerified, "require-verified",
              help: "fail images imgfetch cannot decode (SVG, ICO, JPEG XL, HEIC) instead of saving them unverified"),
        .valued(.maxPixels, "max-pixels", "N", .number, default: .value(String(DecodeLimits().maxPixels)),
                help: "largest width x height decoded"),
        .valued(.maxSize, "max-size", "BYTES", .number, default: "64M",
                help: "largest body accepted; suffixes k, M, G are powers of 1024"),
        .valued(.minFree, "min-free", "SPACE", .number, default: "64M",
                help: "start no download while the output's disk has under SPACE free (suffixes k, M, G; 0: only a full "
                    + "disk stops downloads); the remaining items fail (class disk-full), exit code 1"),
        .valued(.name, "name", "url|hash", .choice(FileNamer.Scheme.allCases.map(\.rawValue)), default: "url",
                help: "file names from the URL's last path segment, or from its SHA-256"),
        .flag(.overwrite, "overwrite", help: "replace files that already exist"),
        .flag(.skipExisting, "skip-existing", default: .selected, help: "keep files that already exist"),
        .valued(.cachePolicy, "cache-policy", "POLICY", .choice(CachePolicy.allCases.map(\.rawValue)), default: "protocol",
                help: "how the cache index (DIR/.imgfetch, or in --work-dir) is used; protocol: reuse indexed files while fresh, "
                    + "revalidate stale ones with ETag/Last-Modified; reload: always download; "
                    + "only-if-cached: no requests"),
        .valued(.progress, "progress", "MODE", .choice(ProgressMode.allCases.map(\.rawValue)), default: "auto",
                help: "progress on stderr: auto, bar, plain or none; auto is a bar when stderr is a terminal, "
                    + "nothing otherwise"),
        .valued(.progressInterval, "progress-interval", "SEC", .number, default: "10",
                help: "seconds between plain status lines"),
        .flag(.quiet, "quiet", short: "q", help: "print only errors on stderr (no progress, no summary)"),
        .flag(.jsonl, "jsonl", help: "stdout gets one JSON object per list item"),
        .valued(.report, "report", "FILE", .file, help: "also write the JSON lines to FILE"),
        .valued(.gallery, "gallery", "FILE", .file,
                help: "write an HTML gallery to FILE at the end; thumbnails of the images, the failures by class"),
        .flag(.help, "help", short: "h", help: "show this help and exit"),
        .flag(.version, "version", help: "show the version and exit"),
        .flag(.manPage, "man", help: "print the man page (roff) and exit"),
        .valued(.completions, "completions", "SHELL", .choice(CompletionShell.allCases.map(\.rawValue)),
                help: "print a completion script for SHELL (bash, zsh or fish) and exit"),
    ]

    /// What `--` does; it is no option, so it is not in `options`.
    static let endOfOptionsHelp = "end of options; later arguments are lists"

    /// What the option list cannot say one option at a time.
    static let notes = "Short options bundle (-qj4); SEC is a decimal number of seconds."

    static let byLongName: [String: Option] = Dictionary(uniqueKeysWithValues: options.map { ($0.long, $0.option) })

    static let byShortName: [Character: Option] = Dictionary(
        uniqueKeysWithValues: options.compactMap { spec in spec.short.map { ($0, spec.option) } })
}
