import ImgFetchCore

/// What each error class (`error.class` in the JSON lines, the counts of the summary and the stats
/// files) means, and whether running again may help: `--help all`, the man page and the README's
/// table say it from here (a test holds the README to it).
enum ErrorClassDocument {
    struct Entry: Sendable {
        let kind: DownloadError.Kind
        /// What happened.
        let meaning: String
        /// Whether a later run may succeed, and what to change otherwise.
        let retry: String
    }

    static let entries: [Entry] = [
        .init(kind: .http, meaning: "the server answered with an error status (403, 404, 500, …)",
              retry: "for 408, 429 and 5xx, later (each was retried --retries times already); others no"),
        .init(kind: .timeout, meaning: "no progress for --timeout, a connect over --connect-timeout, or --max-time ran out",
              retry: "yes"),
        .init(kind: .dns, meaning: "the host name did not resolve", retry: "rarely; check the name"),
        .init(kind: .network, meaning: "refused, reset, an empty reply, a body shorter than its Content-Length, an HTTP/2 "
                  + "stream error or another transport failure",
              retry: "yes"),
        .init(kind: .tls, meaning: "the certificate or the TLS handshake failed",
              retry: "no, unless the server's certificate or --cacert changes"),
        .init(kind: .redirect, meaning: "a redirect refused: too many, a loop, another scheme, or https to http "
                  + "without --allow-downgrade", retry: "no"),
        .init(kind: .tooLarge, meaning: "the body is over --max-size, or the image over --max-pixels",
              retry: "no, unless the limit is raised"),
        .init(kind: .notAnImage, meaning: "the body is not an image (an HTML page, say), or a corrupt one", retry: "no"),
        .init(kind: .truncated, meaning: "a body that arrived whole, holding an image whose data ends before its last "
                  + "pixel: the server has a cut-off file",
              retry: "perhaps; the server may send it whole another time"),
        .init(kind: .unverified, meaning: "with --require-verified, --min-size or --max-aspect-ratio: a format imgfetch cannot decode "
                  + "(SVG, ICO, JPEG XL, HEIC)",
              retry: "no"),
        .init(kind: .tooSmall, meaning: "with --min-size: the image's shorter side is smaller (read from its header, not decoded)",
              retry: "no, unless --min-size is lowered"),
        .init(kind: .aspectRatio, meaning: "with --max-aspect-ratio: the image's longer side is more than R times its shorter",
              retry: "no, unless the ratio is raised"),
        .init(kind: .hashMismatch, meaning: "with --verify-hash: the body's hash is not the one its row's column gives; "
                  + "it is not kept", retry: "rarely; the server has other bytes than the list says"),
        .init(kind: .filesystem, meaning: "the output could not be written (permissions, a read-only or missing directory)",
              retry: "yes, once the directory is writable"),
        .init(kind: .diskFull, meaning: "the output's disk is full, or under --min-free: no request was made",
              retry: "yes, once there is room"),
        .init(kind: .storage, meaning: "the object store (-o s3://…) refused the upload or could not be reached",
              retry: "yes, once the store or its credentials work"),
        .init(kind: .notCached, meaning: "--cache-policy only-if-cached, and the cache index has no usable entry",
              retry: "yes, without only-if-cached"),
        .init(kind: .invalidInput, meaning: "the list line is not a usable URL; the message names FILE:LINE",
              retry: "no; fix the line"),
        .init(kind: .cancelled, meaning: "the run was interrupted (Ctrl-C, SIGTERM) before the item was done", retry: "yes"),
        .init(kind: .hostUnreachable, meaning: "not tried, or not tried again: its host failed --host-failures times in a "
                  + "row (refused, DNS, TLS, connect timeout)", retry: "yes, later"),
        .init(kind: .optOut, meaning: "the response's X-Robots-Tag opts out (noai, noimageai, …), without --ignore-opt-out",
              retry: "no"),
        .init(kind: .deadline, meaning: "the run's --deadline came first", retry: "yes"),
        .init(kind: .blocked, meaning: "with --block-private, the host's address (or a redirect's) is not public; "
                  + "always, the cloud's instance-metadata address: nothing was sent to it",
              retry: "no, unless --allow-host names it"),
    ]

    /// The classes as `--help all` and the man page show them: the class, what it means, then whether a retry helps.
    static var definitions: [TextBlock.Definition] {
        entries.map { .init($0.kind.rawValue, $0.meaning + ". Retry: " + $0.retry) }
    }
}
