import ImgFetchCore

/// The text `imgfetch --help` prints to stdout.
///
/// Written by hand rather than generated from the option table, so the wording and grouping can
/// explain the options; a test checks that every option the parser knows appears here.
/// Every line stays under 80 columns so it reads in a default terminal.
public enum HelpText {
    /// The full help text, ending in a newline.
    public static let usage = """
        Usage: imgfetch [OPTIONS] [LIST ...]

        Fetch many images fast and safely. imgfetch reads URLs from each LIST
        ('-' or no LIST means stdin), downloads them concurrently, verifies each
        body by decoding it, and writes each image atomically into the output
        directory. JPEG, PNG, GIF, WebP, AVIF, TIFF and BMP are verified (every
        frame); SVG, ICO, JPEG XL and HEIC are saved unverified.

        List format:
          One URL per line. Blank lines and lines starting with '#' are skipped.
          Typed at a terminal, the list ends with Ctrl-D.
          After the URL, optional whitespace-separated fields:
            out=NAME                     save as NAME instead of a name from the URL
            priority=high|normal|low     start sooner or later (default normal)
          A bad line is reported as FILE:LINE: reason and counts as failed.

        Options:
          -o, --output-dir DIR       where images go, created if missing (default .)
          -j, --concurrency N        simultaneous transfers, 1-1024 (default 16)
              --per-host N           connections per host, 1-1024 (default 6); an
                                     HTTP/2 host runs up to 100 transfers on each
              --fifo                 start the oldest pending request first (default)
              --lifo                 start the newest pending request first
          -t, --timeout SEC          abort a transfer under 1 KB/s for SEC seconds
                                     (default 15)
              --connect-timeout SEC  limit on the connect phase (default 10)
              --max-time SEC         hard limit on a whole transfer (default off)
              --retries N            retries of timeouts, resets, 408, 429 and 5xx,
                                     with backoff, 0-100 (default 2)
          -H, --header 'K: V'        extra request header (repeatable)
          -A, --user-agent UA        User-Agent header (default imgfetch/\(DownloaderConfiguration.version))
          -u, --user USER:PASS       credentials, sent only to the list's own hosts
              --cookie-jar FILE      read and write cookies in FILE (default off)
              --insecure             skip TLS certificate verification (default off)
              --cacert FILE          verify TLS certificates against the CA
                                     certificates in FILE (PEM), not the system's
              --allow-downgrade      follow redirects from https to http (default off)
              --http1.1              use HTTP/1.1 only (default: HTTP/2 over TLS
                                     when the server offers it, else HTTP/1.1)
              --http2                also offer HTTP/2 (h2c upgrade) on plain http
              --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT, without DNS
                                     (curl's syntax; repeatable)
              --save-as FORMAT       original (the verified bytes), png, ppm or pam
                                     (decompressed pixels of the first frame, EXIF
                                     orientation applied; png and pam keep the
                                     source's channels and bit depth)
                                     (default original)
              --max-dimension N      with png/ppm/pam: downscale so the longer
                                     side is at most N pixels
              --no-decode            skip full decoding; bodies are still checked
                                     by their magic bytes
              --require-verified     fail images imgfetch cannot decode (SVG, ICO,
                                     JPEG XL, HEIC) instead of saving them
                                     unverified
              --max-pixels N         largest width x height decoded
                                     (default 178956970)
              --max-size BYTES       largest body accepted; suffixes k, M, G are
                                     powers of 1024 (default 64M)
              --name url|hash        file names from the URL's last path segment,
                                     or from SHA-256 of the URL (default url)
              --overwrite            replace files that already exist
              --skip-existing        keep files that already exist (default)
              --cache-policy POLICY  protocol: reuse files indexed in DIR/.imgfetch
                                     while fresh, revalidate stale ones with
                                     ETag/Last-Modified; reload: always download;
                                     only-if-cached: no requests (default protocol)
              --progress MODE        auto, bar, plain or none (default auto: a bar
                                     when stderr is a terminal, nothing otherwise)
              --progress-interval SEC  seconds between plain status lines (default 10)
          -q, --quiet                print only errors on stderr (no summary)
              --jsonl                stdout gets one JSON object per list item
              --report FILE          also write the JSON lines to FILE
          -h, --help                 show this help and exit
              --version              show the version and exit
          --                         end of options; later arguments are lists
          Short options bundle (-qj4); SEC is a decimal number of seconds.

        Output:
          stdout: one line per list item, tab-separated:
                    saved|skipped|failed|cancelled <TAB> URL <TAB> PATH-or-error
          stderr: progress, warnings, errors and a one-line summary.

        A file indexed by an earlier run is the cache's: it is reused, revalidated
        or replaced whatever --skip-existing says; those options decide only for
        files that are not in the index.

        Exit status:
          0    every item was saved or skipped
          1    at least one item failed
          2    usage error, or an unreadable list or output directory
          130  interrupted by SIGINT (143 for SIGTERM), after cleaning up
          141  stdout was closed by its reader (| head): a quiet stop

        """
}
