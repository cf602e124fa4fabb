import CCurl
import FoundationEssentials
import Glibc

/// The libcurl options every transfer runs with, and what they point to: the custom header list
/// and the run's share handle (which holds the `--resolve` entries). Used by the engine thread only.
final class EasyHandleOptions {
    private let configuration: DownloaderConfiguration
    private let headerList: UnsafeMutablePointer<curl_slist>?
    private let share: ConnectionShare
    /// The store exchanges' own share: their connections never go unchecked to an image request
    /// (libcurl reuses a cached connection without calling the open-socket callback again, and
    /// the store's handles have none: a store or credential endpoint on a private or metadata
    /// address would otherwise pass `AddressPolicy`).
    private let storeShare: ConnectionShare
    private let receiveBufferSize: Int

    /// Redirects followed before a transfer fails.
    static let maxRedirects = 10

    init(configuration: DownloaderConfiguration) throws(DownloadError) {
        if let file = configuration.caCertificateFile {
            try Self.checkReadable(file)
        }
        if let file = configuration.netrcFile, !file.isEmpty {
            try Self.checkReadable(file, option: "--netrc-file", kind: .invalidInput, expected: "a netrc file")
        }
        self.configuration = configuration
        share = try ConnectionShare(cookieJar: configuration.cookieJar)
        storeShare = try ConnectionShare(cookieJar: nil)
        headerList = Self.list(configuration.headers)
        receiveBufferSize = Self.receiveBufferSize(concurrency: configuration.concurrency)
        if let resolveList = Self.list(configuration.resolve) {
            defer { curl_slist_free_all(resolveList) }
            try share.loadResolveEntries(resolveList)
            try storeShare.loadResolveEntries(resolveList)
        }
    }

    private static func list(_ lines: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        return list
    }

    /// libcurl's receive buffer for `concurrency` transfers at once: curl's own tool reads 100 KB
    /// at a time, and libcurl's 16 KB default took 6 times the recv calls and engine loop turns on
    /// large bodies (13% more CPU on 24 × 1.7 MB with --no-decode). Every handle keeps its buffer,
    /// so past 40 transfers they share 4 MiB, down to libcurl's 16 KiB each (`-j 1000`: 16 MiB
    /// instead of 100 MiB).
    static func receiveBufferSize(concurrency: Int) -> Int {
        min(100 << 10, max(16 << 10, (4 << 20) / max(1, concurrency)))
    }

    /// Fails the whole run up front: an unreadable CA file would otherwise fail every https URL
    /// one by one, and an unreadable netrc file every request that needs its credentials.
    private static func checkReadable(_ file: String, option: String = "--cacert", kind: DownloadError.Kind = .tls,
                                      expected: String = "a PEM file") throws(DownloadError) {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DownloadError(kind, "cannot read \(option) '\(file)': \(Errno.describe())")
        }
        var info = stat()
        let isDirectory = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        close(descriptor)
        if isDirectory {
            throw DownloadError(kind, "cannot read \(option) '\(file)': it is a directory (expected \(expected))")
        }
    }

    /// A new easy handle with the options that are the same for every transfer.
    func makeHandle() -> OpaquePointer {
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        CCurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 1)
        CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, bodyCallback)
        CCurl_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback)
        CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        CCurl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Redirects are followed by the engine, which checks scheme, origin and count at each hop.
        CCurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        // SDWebImage's downloadTimeout: abort when under 1 KB/s for `timeout` seconds.
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1024)
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(configuration.timeout.rounded(.up))))
        CCurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000))
        CCurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, configuration.maxTime.map { Int($0 * 1000) } ?? 0)
        CCurl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Self.curlHTTPVersion(configuration.httpVersion))
        CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, configuration.userAgent)
        CCurl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, receiveBufferSize)
        if configuration.insecure {
            CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0)
            CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let caFile = configuration.caCertificateFile {
            CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile)
        }
        if let netrc = configuration.netrcFile {
            // libcurl looks each request's host up: a redirect to another host gets that host's
            // entry (or none), never the first host's credentials.
            CCurl_easy_setopt_long(handle, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
            if !netrc.isEmpty { CCurl_easy_setopt_string(handle, CURLOPT_NETRC_FILE, netrc) }
        }
        // Every address is checked as it is connected to (`AddressPolicy`).
        CCurl_easy_setopt_opensocket_callback(handle, openSocketCallback)
        share.attach(handle)
        return handle
    }

    private static func curlHTTPVersion(_ preference: HTTPVersionPreference) -> Int {
        switch preference {
        case .automatic: Int(CURL_HTTP_VERSION_2TLS)
        case .http1_1: Int(CURL_HTTP_VERSION_1_1)
        case .http2: Int(CURL_HTTP_VERSION_2_0)
        }
    }

    /// Whether a new transfer to `url` waits for a connection of its host that may turn out to
    /// multiplex, rather than opening one of its own (CURLOPT_PIPEWAIT, as curl --parallel does):
    /// the first transfers to an HTTP/2 host then share one connection and one TLS handshake. Only
    /// over https, where ALPN settles the question during the handshake and wakes the waiting
    /// transfers. On plain http (even with --http2's h2c offer) libcurl 7.88 wakes them only when
    /// the first transfer is done, so each host would start with one transfer at a time.
    private func waitsForMultiplexing(_ url: ParsedURL) -> Bool {
        configuration.httpVersion != .http1_1 && url.scheme == "https"
    }

    /// Sets the options that differ per transfer; every one is set each time, since handles are reused.
    func configure(_ handle: OpaquePointer, for transfer: Transfer) {
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        CCurl_easy_setopt_string(handle, CURLOPT_URL, transfer.currentURL.normalized)
        CCurl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, waitsForMultiplexing(transfer.currentURL) ? 1 : 0)
        CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        CCurl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, userdata)
        transfer.addressPolicy = configuration.addressPolicy
        // After a redirect to another origin, neither -u nor any -H header goes along.
        CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, requestHeaders(for: transfer))
        CCurl_easy_setopt_string(handle, CURLOPT_USERPWD, transfer.leftOrigin ? nil : configuration.credentials)
        // A body kept only in part (robots.txt) may announce any length; the sink stops it.
        CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE,
                                transfer.request.truncatesBody ? 0 : curl_off_t(transfer.body.maxSize))
    }

    /// Sets every option of a store exchange on `handle`, reset first: store handles are kept
    /// apart from the downloads' (`Engine`), and an exchange shares none of the run's `-H`, `-u`,
    /// `--cacert`, `--insecure` or cookies. Its connections are the share's, as the downloads' are.
    func configureStore(_ handle: OpaquePointer, for transfer: Transfer, _ exchange: StoreExchange) {
        curl_easy_reset(handle)
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        CCurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 1)
        CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, bodyCallback)
        CCurl_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback)
        CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        CCurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1024)
        CCurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(exchange.timeout.rounded(.up))))
        CCurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(exchange.connectTimeout * 1000))
        CCurl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Self.curlHTTPVersion(configuration.httpVersion))
        CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, exchange.userAgent)
        if let bundle = exchange.caBundle { CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, bundle) }
        storeShare.attach(handle, cookies: false)
        // The path is sent as signed: libcurl must not remove dot segments or re-encode it.
        CCurl_easy_setopt_string(handle, CURLOPT_URL, exchange.url)
        CCurl_easy_setopt_long(handle, CURLOPT_PATH_AS_IS, 1)
        if let signing = exchange.signing {
            CCurl_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, signing.scope)
            CCurl_easy_setopt_string(handle, CURLOPT_USERNAME, signing.accessKey)
            CCurl_easy_setopt_string(handle, CURLOPT_PASSWORD, signing.secretKey)
        }
        curl_slist_free_all(transfer.storeHeaderList)
        var list: UnsafeMutablePointer<curl_slist>?
        for header in exchange.headers { list = curl_slist_append(list, header) }
        transfer.storeHeaderList = list
        CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        switch (exchange.method, exchange.body) {
        case (.head, _):
            CCurl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case (.put, .file(_, _, let length, _)), (.post, .file(_, _, let length, _)):
            // libcurl's `Expect: 100-continue` stays for a file body: a refusal then costs no
            // body. It cannot be turned off with an empty `Expect:` header, which libcurl 7.88
            // signs but does not send.
            CCurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            if exchange.method == .post { CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "POST") }
            CCurl_easy_setopt_write_callback(handle, CURLOPT_READFUNCTION, sendCallback)
            CCurl_easy_setopt_pointer(handle, CURLOPT_READDATA, userdata)
            // libcurl rewinds a body it must send again on a new connection (a reused one that
            // had closed), rather than fail the attempt with CURLE_SEND_FAIL_REWIND.
            CCurl_easy_setopt_seek_callback(handle, seekCallback)
            CCurl_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, userdata)
            CCurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
        case (.put, _), (.post, _):
            // A POST body sent as PUT when the method is PUT: libcurl adds no `Expect` to a body
            // this small, and copies it at once (an empty one still needs a pointer).
            if exchange.method == .put { CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "PUT") }
            let bytes: [UInt8] = if case .bytes(let bytes) = exchange.body { bytes } else { [] }
            CCurl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
            (bytes.isEmpty ? [0] : bytes).withUnsafeBytes { raw in
                _ = CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            }
        case (.delete, _):
            CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "DELETE")
        case (.get, _):
            break
        }
    }

    /// The -H headers (unless the transfer left its origin), plus the request's conditional
    /// headers when this hop is their URL, and `Range` and `If-Range` when this hop's body was cut
    /// off and continues (`BodyResume`).
    private func requestHeaders(for transfer: Transfer) -> UnsafeMutablePointer<curl_slist>? {
        let resume = transfer.resumePoint.flatMap { $0.url == transfer.currentURL.normalized ? $0 : nil }
        transfer.sentRange = resume != nil
        guard transfer.isConditional || resume != nil else { return transfer.leftOrigin ? nil : headerList }
        curl_slist_free_all(transfer.conditionalHeaderList)
        var list: UnsafeMutablePointer<curl_slist>?
        for header in (transfer.leftOrigin ? [] : configuration.headers)
            + (transfer.isConditional ? transfer.request.conditionalHeaders : []) + (resume?.headers ?? []) {
            list = curl_slist_append(list, header)
        }
        transfer.conditionalHeaderList = list
        return list
    }

    /// Writes the cookie jar, if there is one.
    func saveCookies() {
        share.saveCookies()
    }

    /// Frees what the options point to; every easy handle must be cleaned up first.
    func cleanUp() {
        curl_slist_free_all(headerList)
        share.cleanUp()
        storeShare.cleanUp()
    }
}

/// libcurl's write callback: the userdata is the transfer, retained by the handle's CURLOPT_PRIVATE.
private let bodyCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

/// libcurl's read callback (the same C type as a write callback): a store exchange's file body.
private let sendCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

/// libcurl's seek callback: a store exchange's file body from `offset` again.
private let seekCallback: curl_seek_callback = { userdata, offset, origin in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.seekBody(to: Int(offset), origin: origin) ? Int32(CURL_SEEKFUNC_OK) : Int32(CURL_SEEKFUNC_CANTSEEK)
}

/// libcurl's open-socket callback, before each connection of an image request: no socket for an
/// address the policy refuses (libcurl then tries the host's other addresses, if any, and fails
/// the attempt with CURLE_COULDNT_CONNECT when none is left), which the transfer notes for its error.
private let openSocketCallback: curl_opensocket_callback = { clientp, _, address in
    guard let clientp, let address else { return CURL_SOCKET_BAD }
    let transfer = Unmanaged<Transfer>.fromOpaque(clientp).takeUnretainedValue()
    var bytes = [UInt8](repeating: 0, count: 16)
    if CCurl_sockaddr_address(address, &bytes) == 1,
       let refusal = transfer.addressPolicy.refusal(host: transfer.currentURL.host, address: bytes) {
        transfer.blockedConnection = refusal
        return CURL_SOCKET_BAD
    }
    transfer.openedConnections += 1
    return CCurl_open_socket(address)
}

/// libcurl's header callback: one header line per call, for every response of the transfer.
/// Returning less than the line's length aborts the transfer (the transfer has set `abortError`).
private let headerCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
}
