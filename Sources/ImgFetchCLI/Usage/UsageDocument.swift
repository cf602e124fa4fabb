/// The prose around the options, shared by `--help` and the man page.
///
/// Each renderer picks the parts it shows and their order; the words are written once, here.
/// Text is plain: no markup, no line breaks inside a paragraph.
enum UsageDocument {
    static let synopsis = "imgfetch [OPTIONS] [URL | LIST ...]"

    /// The man page's NAME line, and the start of `--help`.
    static let summary = "fetch many images fast and safely"

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
            .init("1", "at least one item failed"),
            .init("2", "usage error, an unreadable list or output directory, or an open-file limit too low "
                + "for -j"),
            .init("130", "interrupted by SIGINT (143 for SIGTERM), after cleaning up"),
            .init("141", "stdout was closed by its reader (| head): a quiet stop"),
        ]),
    ]

    static let environment: [TextBlock] = [
        .definitions([
            .init("NO_COLOR", "when set and not empty, the progress bar has no colors"),
            .init("TERM", "dumb: no progress bar with --progress auto"),
            .init("http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "the proxy to use, read by libcurl as curl(1) "
                + "reads them"),
        ]),
    ]

    static let examples: [UsageExample] = [
        .init("Fetch a list into ./pics:", "imgfetch urls.txt -o pics"),
        .init("Newest first, 32 at a time:", "imgfetch urls.txt --lifo --timeout 15 -j 32"),
        .init("Read URLs from a pipe:", #"grep -o 'https://[^"]*\.jpg' page.html | imgfetch - -o pics"#),
        .init("List what failed:", #"imgfetch urls.txt -o pics -q | awk -F'\t' '$1 == "failed"'"#),
        .init("Send a header, credentials and cookies:",
              "imgfetch urls.txt -H 'X-Api-Key: 123' -u alice:secret \\\n    --cookie-jar cookies.txt"),
        .init("Save PNG thumbnails:", "imgfetch urls.txt -o thumbs --save-as png --max-dimension 256"),
        .init("Print the error of each failed item:",
              #"imgfetch urls.txt --jsonl \"# + "\n" + #"    | jq -r 'select(.status == "failed") | .error.message'"#),
        .init("From cron, with a log and a report:",
              "imgfetch urls.txt -o pics --progress plain --report run.jsonl \\\n    >> fetch.log 2>&1"),
        .init("Offline: what is missing from the cache?", "imgfetch urls.txt -o pics --cache-policy only-if-cached"),
        .init("Install the bash completion for the current user:",
              "imgfetch --completions bash \\\n    > ~/.local/share/bash-completion/completions/imgfetch"),
    ]

    /// Related commands for SEE ALSO: name and manual section.
    static let seeAlso: [(name: String, section: Int)] = [("curl", 1), ("wget2", 1)]
}
