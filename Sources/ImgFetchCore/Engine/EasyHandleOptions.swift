import CCurl
import FoundationEssentials
import Glibc

/// The libcurl options every transfer runs with, and what they point to: the custom header list
/// and the cookie share. Used by the engine thread only.
final class EasyHandleOptions {
    private let configuration: DownloaderConfiguration
    private let headerList: UnsafeMutablePointer<curl_slist>?
    private let cookieShare: OpaquePointer?
    /// A handle that never transfers: it loads the cookie jar into the share at start and writes it at the end.
    private let cookieHandle: OpaquePointer?

    /// Redirects followed before a transfer fails.
    static let maxRedirects = 10

    init(configuration: DownloaderConfiguration) throws(DownloadError) {
        if let file = configuration.caCertificateFile {
            try Self.checkReadable(file)
        }
        self.configuration = configuration
        var list: UnsafeMutablePointer<curl_slist>?
        for header in configuration.headers { list = curl_slist_append(list, header) }
        headerList = list
        guard let jar = configuration.cookieJar else {
            cookieShare = nil
            cookieHandle = nil
            return
        }
        guard let share = curl_share_init(), let handle = curl_easy_init() else {
            throw DownloadError(.network, "cannot initialize libcurl's cookie engine")
        }
        // One thread uses the share, so it needs no lock callbacks.
        CCurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        CCurl_easy_setopt_share(handle, share)
        CCurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, jar)
        CCurl_easy_setopt_string(handle, CURLOPT_COOKIELIST, "RELOAD")
        cookieShare = share
        cookieHandle = handle
    }

    /// Fails the whole run up front: an unreadable CA file would otherwise fail every https URL one by one.
    private static func checkReadable(_ file: String) throws(DownloadError) {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DownloadError(.tls, "cannot read --cacert '\(file)': \(Errno.describe())")
        }
        var info = stat()
        let isDirectory = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        close(descriptor)
        if isDirectory {
            throw DownloadError(.tls, "cannot read --cacert '\(file)': it is a directory (expected a PEM file)")
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
        CCurl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maxSize))
        CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, configuration.userAgent)
        // curl's own tool reads 100 KB at a time; libcurl's 16 KB default took 6 times the recv calls
        // and engine loop turns on large bodies (13% more CPU on 24 × 1.7 MB with --no-decode).
        CCurl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 100 << 10)
        if configuration.insecure {
            CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0)
            CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let caFile = configuration.caCertificateFile {
            CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile)
        }
        if let cookieShare {
            CCurl_easy_setopt_share(handle, cookieShare)
            // An empty file name turns the cookie engine on without reading a file (the jar is already in the share).
            CCurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, "")
        }
        return handle
    }

    /// Sets the options that differ per transfer; every one is set each time, since handles are reused.
    func configure(_ handle: OpaquePointer, for transfer: Transfer) {
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        CCurl_easy_setopt_string(handle, CURLOPT_URL, transfer.currentURL.normalized)
        CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata)
        CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        // After a redirect to another origin, neither -u nor any -H header goes along.
        CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, requestHeaders(for: transfer))
        CCurl_easy_setopt_string(handle, CURLOPT_USERPWD, transfer.leftOrigin ? nil : configuration.credentials)
    }

    /// The -H headers (unless the transfer left its origin), plus its validators when this hop is
    /// the URL the cached response came from.
    private func requestHeaders(for transfer: Transfer) -> UnsafeMutablePointer<curl_slist>? {
        guard transfer.isConditional else { return transfer.leftOrigin ? nil : headerList }
        curl_slist_free_all(transfer.conditionalHeaderList)
        var list: UnsafeMutablePointer<curl_slist>?
        for header in (transfer.leftOrigin ? [] : configuration.headers) + transfer.validators {
            list = curl_slist_append(list, header)
        }
        transfer.conditionalHeaderList = list
        return list
    }

    /// Writes the cookie jar, if there is one.
    func saveCookies() {
        guard let cookieHandle, let jar = configuration.cookieJar else { return }
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIEJAR, jar)
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIELIST, "FLUSH")
        CCurl_easy_setopt_string(cookieHandle, CURLOPT_COOKIEJAR, nil)
    }

    func cleanUp() {
        curl_slist_free_all(headerList)
        if let cookieHandle { curl_easy_cleanup(cookieHandle) }
        if let cookieShare { curl_share_cleanup(cookieShare) }
    }
}

/// libcurl's write callback: the userdata is the transfer, retained by the handle's CURLOPT_PRIVATE.
private let bodyCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

/// libcurl's header callback: one header line per call, for every response of the transfer.
/// Returning less than the line's length aborts the transfer (the transfer has set `abortError`).
private let headerCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
}
