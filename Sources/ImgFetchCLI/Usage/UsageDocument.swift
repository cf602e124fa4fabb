/// The prose around the options, shared by `--help` and the man page.
///
/// Each renderer picks the parts it shows and their order; the words are written once, here.
/// Text is plain: no markup, no line breaks inside a paragraph.
enum UsageDocument {
    static let synopsis = "imgfetch [OPTIONS] [URL | LIST ...]"

    /// The man page's NAME line, and the start of `--help all`.
    static let summary = "fetch many images fast and safely"

    /// What the short help says under the usage line.
    static let briefDescription = "Fetch many images fast and safely: each URL given, and the URLs of each LIST (a "
        + "URL per line, or a CSV, TSV, JSONL or Parquet table; '-' or none: stdin)."

    static let description: [TextBlock] = [
        .paragraph("imgfetch fetches each URL given as an argument and the URLs of each LIST ('-' or no "
            + "argument at all means stdin), downloads them "
            + "concurrently, verifies each body by decoding it, and writes each image atomically into the "
            + "output directory. JPEG, PNG, GIF, WebP, AVIF, TIFF and BMP are verified (every frame); SVG, "
            + "ICO, JPEG XL and HEIC are saved unverified."),
    ]

    static let listFormat: [TextBlock] = [
        .paragraph("One URL per line. Blank lines and lines starting with '#' are skipped. Typed at a "
            + "terminal, the list ends with Ctrl-D."),
        .paragraph("After the URL, optional whitespace-separated fields:"),
        .definitions([
            .init("out=NAME", "save as NAME instead of a name from the URL"),
            .init("priority=high|normal|low", "start sooner or later (default normal)"),
        ]),
        .paragraph("A bad line is reported as FILE:LINE: reason and counts as failed."),
        .paragraph("An argument that begins with http:// or https:// is a URL to fetch, reported as "
            + "<arguments>:N (its place among the arguments); any other argument is a list. A list file whose "
            + "name begins like a URL is given as ./http..."),
    ]

    static let output: [TextBlock] = [
        .definitions([
            .init("stdout", "one line per list item, tab-separated: saved|skipped|failed|cancelled <TAB> URL "
                + "<TAB> PATH-or-error; with --jsonl, one JSON object per item"),
            .init("stderr", "progress, warnings, errors and a one-line summary"),
        ]),
    ]

    static let cacheIndex: [TextBlock] = [
        .paragraph("A file indexed by an earlier run (in DIR/.imgfetch, or in --work-dir) is the cache's: it is reused, "
            + "revalidated or replaced whatever --skip-existing says; those options decide only for files "
            + "that are not in the index."),
    ]

    static let exitStatus: [TextBlock] = [
        .definitions([
            .init("0", "every item was saved or skipped"),
            .init("1", "at least one item failed, --deadline passed, or a shard could not be completed"),
            .init("2", "usage error, an unreadable list or output directory, an object-storage bucket that does "
                + "not exist or is in another region, or an open-file limit too low for -j"),
            .init("75", "with --failures-are-data only: a retry may help (the output cannot be written, a full disk, "
                + "the object store failing, a signal, --deadline); failed items are then exit 0"),
            .init("130", "interrupted by SIGINT (143 for SIGTERM), after cleaning up"),
            .init("141", "stdout was closed by its reader (| head): a quiet stop"),
        ]),
    ]

    /// Every variable imgfetch reads (a test holds the sources to this list).
    static let environment: [TextBlock] = [
        .definitions([
            .init("NO_COLOR", "when set and not empty, the progress bar has no colors"),
            .init("TERM", "dumb: no progress bar with --progress auto"),
            .init("TERM_PROGRAM, TMUX and the like",
                  "which terminal this is (also VTE_VERSION, KITTY_WINDOW_ID, KONSOLE_VERSION, WT_SESSION, "
                    + "ALACRITTY_WINDOW_ID, WEZTERM_PANE, GHOSTTY_RESOURCES_DIR): whether it rewraps lines when it is "
                    + "resized, so the live area is redrawn right"),
            .init("http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "the proxy to use, read by libcurl as curl(1) "
                + "reads them"),
            .init("AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN",
                  "with -o s3://…: the credentials uploads are signed with, the first source of the AWS chain"),
            .init("AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME",
                  "with -o s3://…: web identity (EKS's IRSA), exchanged at STS for a role's keys"),
            .init("AWS_PROFILE, AWS_DEFAULT_PROFILE",
                  "with -o s3://…: the profile of the shared files (default: default): its keys, credential_process, "
                    + "or role_arn with source_profile"),
            .init("AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE",
                  "with -o s3://…: the shared files (default ~/.aws/credentials and ~/.aws/config)"),
            .init("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                  "with -o s3://…: ECS's container credentials endpoint, a path on its link-local address"),
            .init("AWS_CONTAINER_CREDENTIALS_FULL_URI",
                  "with -o s3://…: a container credentials endpoint's whole URL (EKS Pod Identity; http only to "
                    + "loopback and AWS's addresses)"),
            .init("AWS_CONTAINER_AUTHORIZATION_TOKEN, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
                  "with -o s3://…: the token that endpoint wants, or the file it is in"),
            .init("AWS_EC2_METADATA_DISABLED, AWS_EC2_METADATA_SERVICE_ENDPOINT",
                  "with -o s3://…: the instance's metadata service (IMDSv2), the chain's last source: off, or "
                    + "its address"),
            .init("AWS_METADATA_SERVICE_TIMEOUT", "with -o s3://…: seconds to wait for each metadata answer (default 1)"),
            .init("AWS_REGION, AWS_DEFAULT_REGION", "with -o s3://…: the bucket's region (default: the profile's, "
                + "else us-east-1)"),
            .init("AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_STS", "with -o s3://…: a store other than "
                + "AWS, and the STS endpoint that web identity and roles are exchanged at"),
            .init("AWS_S3_ADDRESSING_STYLE", "with -o s3://…: path (ENDPOINT/BUCKET/KEY), virtual "
                + "(BUCKET.ENDPOINT-HOST/KEY) or auto (path-style on a custom endpoint, virtual-hosted on AWS)"),
            .init("AWS_CA_BUNDLE", "with -o s3://…: the CA certificates (PEM) the store's certificate is verified against"),
            .init("IMGFETCH_S3_PART_SIZE", "with -o s3://…: the part size of multipart uploads, in bytes"),
            .init("TMPDIR", "with -o s3://… and no --work-dir: where files are made before their upload "
                + "($TMPDIR/imgfetch-s3/BUCKET/PREFIX; default /tmp)"),
            .init("JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID", "without --shard: this process's shard (a Kubernetes "
                + "Indexed Job's pod, a Slurm array's task), with IMGFETCH_SHARD_COUNT"),
            .init("IMGFETCH_SHARD_COUNT", "without --shard: how many shards the list is split into"),
        ]),
    ]

    /// The keys of each `--jsonl` object, in their order (a test holds the output to this list).
    static let jsonFields: [TextBlock] = [
        .definitions([
            .init("url", "the item's URL, any password replaced by ***"),
            .init("status", "saved, skipped, failed or cancelled"),
            .init("paths", "the files written for the item"),
            .init("http_status", "the final response's status, or null"),
            .init("http_version", "the final response's protocol (\"1.1\", \"2\"), or null"),
            .init("bytes", "the body's size"),
            .init("format", "jpeg, png, gif, webp, avif, tiff, bmp, svg, ico, jxl or heic, or null"),
            .init("width, height, channels, bit_depth", "the source image's, as its header says"),
            .init("verified", "every frame was decoded"),
            .init("output_width, output_height", "the pixels written by a pixel --save-as; null for original bytes"),
            .init("attempts", "requests made for the item"),
            .init("duration_ms", "from its first request to its result"),
            .init("coalesced", "the item shared another item's transfer (the same URL)"),
            .init("cache", "fresh, stale, revalidated or downloaded; null when the cache index had no say"),
            .init("skip_reason", "why a skipped item was not fetched (robots.txt, a shard complete from an earlier run); "
                + "null otherwise"),
            .init("made", "for an item whose output an earlier run made (a file the cache index has, a row of a shard "
                + "completed before): {\"status\", \"http_status\", \"bytes\"} as that run reported them; null otherwise"),
            .init("error", "{\"class\", \"message\"} (see ERROR CLASSES), or null"),
            .init("caption, columns", "a table's row: its caption, and its other columns as strings"),
            .init("line", "{\"file\", \"line\"}: where the item came from (<arguments> for a URL given as an argument)"),
            .init("key", "with --output-format webdataset: the sample's key"),
        ]),
    ]

    /// What imgfetch writes besides the images.
    static let files: [TextBlock] = [
        .definitions([
            .init("DIR/.imgfetch/index.sqlite", "the cache index (in --work-dir when given): what each file was "
                + "downloaded from, with its ETag and Last-Modified, so a re-run revalidates instead of downloading"),
            .init("DIR/.imgfetch/thumbs/", "the thumbnails of --gallery, reused by a re-run"),
            .init(".imgfetch-PID@HOST-N.part, .imgfetch-PID@HOST-N.tar", "temp files while an image or a shard is "
                + "made (unnamed where the file system allows); renamed into place when complete, removed on failure"),
            .init("N.tar, N.jsonl, N_stats.json", "with --output-format webdataset: each shard, its result lines, "
                + "and its counts (written last: a shard without it is redone)"),
            .init("stats.json", "with --output-format webdataset: the counts of every shard, in img2dataset's names too, "
                + "written anew after each shard (PREFIX-stats.json with a name prefix)"),
            .init("FILE.part", "--report FILE and --gallery FILE while the run goes on; renamed to FILE at the end"),
        ]),
    ]

    static let examples: [UsageExample] = [
        .init("Fetch one image, as curl or wget would:", "imgfetch https://example.com/cat.jpg -o pics", brief: true),
        .init("Fetch a list into ./pics:", "imgfetch urls.txt -o pics", brief: true),
        .init("Newest first, 32 at a time:", "imgfetch urls.txt --lifo --timeout 15 -j 32", brief: true),
        .init("Read URLs from a pipe:", #"grep -o 'https://[^"]*\.jpg' page.html | imgfetch - -o pics"#, brief: true),
        .init("List what failed:", #"imgfetch urls.txt -o pics -q | awk -F'\t' '$1 == "failed"'"#),
        .init("Send a header, credentials and cookies:",
              "imgfetch urls.txt -H 'X-Api-Key: 123' -u alice:secret \\\n    --cookie-jar cookies.txt"),
        .init("Save PNG thumbnails:", "imgfetch urls.txt -o thumbs --save-as png --max-dimension 256"),
        .init("Print the error of each failed item:",
              #"imgfetch urls.txt --jsonl \"# + "\n" + #"    | jq -r 'select(.status == "failed") | .error.message'"#),
        .init("From cron, with a log and a report:",
              "imgfetch urls.txt -o pics --progress plain --report run.jsonl \\\n    >> fetch.log 2>&1"),
        .init("Offline: what is missing from the cache?", "imgfetch urls.txt -o pics --cache-policy only-if-cached"),
        .init("Build a dataset of 256-pixel crops with captions from a CSV table:",
              "imgfetch photos.csv --caption-column caption --resize 256 \\\n"
                  + "    --fit center-crop --output-format webdataset -o shards", brief: true),
        .init("Install the bash completion for the current user:",
              "imgfetch --completions bash \\\n    > ~/.local/share/bash-completion/completions/imgfetch"),
    ]

    /// Related commands for SEE ALSO: name and manual section.
    static let seeAlso: [(name: String, section: Int)] = [("curl", 1), ("wget2", 1)]
}
