import CCurl

/// One libcurl share handle for the whole run: the DNS cache, TLS sessions, the connection cache
/// and, with a cookie jar, the cookies.
///
/// An easy handle keeps TLS sessions to itself unless it uses a share, so without one a new
/// connection to a host that a run already knows made a full handshake. Shared, a reconnect (after
/// the server closed an idle connection or sent GOAWAY) resumes the session instead.
///
/// Engine thread only: every easy handle that uses the share runs on that one thread, so the share
/// needs no lock callbacks.
final class ConnectionShare {
    let share: OpaquePointer
    private let cookieJar: String?
    /// A handle that never transfers: it loads the cookie jar into the share at start and writes it at the end.
    private let cookieHandle: OpaquePointer?

    init(cookieJar: String?) throws(DownloadError) {
        guard let share = curl_share_init() else { throw DownloadError(.network, "cannot initialize libcurl's share handle") }
        for data in [CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION, CURL_LOCK_DATA_CONNECT] {
            CCurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(data.rawValue))
        }
        self.share = share
        self.cookieJar = cookieJar
        guard let cookieJar else {
            cookieHandle = nil
            return
        }
        guard let handle = curl_easy_init() else {
            curl_share_cleanup(share)
            throw DownloadError(.network, "cannot initialize libcurl's cookie engine")
        }
        CCurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        CCurl_easy_setopt_share(handle, share)
        CCurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, cookieJar)
        CCurl_easy_setopt_string(handle, CURLOPT_COOKIELIST, "RELOAD")
        cookieHandle = handle
    }

    /// Puts `--resolve` entries into the shared DNS cache once, for every transfer of the run.
    ///
    /// libcurl parses a handle's whole `CURLOPT_RESOLVE` list at the start of each transfer that
    /// carries it: with 500 entries and `-j 1000`, that was most of the engine thread's time in
    /// the first wave. The entries it adds are permanent (never pruned), so one load serves the
    /// run. It happens in libcurl's transfer set-up, before the protocol is checked: a handle
    /// allowed only http and given an https URL loads them and stops there, without any I/O.
    func loadResolveEntries(_ list: UnsafeMutablePointer<curl_slist>) throws(DownloadError) {
        guard let handle = curl_easy_init() else { throw DownloadError(.network, "cannot initialize libcurl") }
        defer { curl_easy_cleanup(handle) }
        CCurl_easy_setopt_share(handle, share)
        CCurl_easy_setopt_slist(handle, CURLOPT_RESOLVE, list)
        CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http")
        CCurl_easy_setopt_string(handle, CURLOPT_URL, "https://imgfetch-resolve.invalid/")
        let code = curl_easy_perform(handle)
        guard code == CURLE_UNSUPPORTED_PROTOCOL else {
            throw DownloadError(.network, "--resolve: \(String(cString: curl_easy_strerror(code)))")
        }
    }

    /// Makes `handle` use the share, and the cookie engine when there is a jar and `cookies`
    /// (an object store's exchanges get none of the sites' cookies).
    func attach(_ handle: OpaquePointer, cookies: Bool = true) {
        CCurl_easy_setopt_share(handle, share)
        // An empty file name turns the cookie engine on without reading a file (the jar is already in the share).
        if cookies && cookieHandle != nil { CCurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, "") }
    }

    /// Writes the cookie jar, if there is one.
    func saveCookies() {
        guard let cookieHandle, let cookieJar else { return }
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIEJAR, cookieJar)
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIELIST, "FLUSH")
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIEJAR, nil)
    }

    /// Frees the share; every other easy handle that used it must be cleaned up first.
    func cleanUp() {
        if let cookieHandle { curl_easy_cleanup(cookieHandle) }
        curl_share_cleanup(share)
    }
}
