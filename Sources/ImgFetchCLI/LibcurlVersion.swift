import CCurl

/// The libcurl part of `--version`: libcurl and the libraries it uses for HTTP and HTTPS, read
/// from `curl_version_info`.
///
/// Not `curl_version()`: its string also names OpenLDAP, and asking libldap for its version
/// initializes LDAP and SASL (eight SASL plugins and Berkeley DB loaded with dlopen, ldap.conf,
/// resolv.conf and hosts read): 3.5 ms of a 20 ms `imgfetch --version`, for protocols imgfetch
/// never uses. A real run never pays it.
enum LibcurlVersion {
    static var description: String {
        guard let info = curl_version_info(CURLVERSION_TENTH)?.pointee else { return "libcurl" }
        var parts = ["libcurl/" + String(cString: info.version)]
        func add(_ prefix: String, _ text: UnsafePointer<CChar>?) {
            if let text { parts.append(prefix + String(cString: text)) }
        }
        add("", info.ssl_version)
        add("zlib/", info.libz_version)
        add("brotli/", info.brotli_version)
        add("zstd/", info.zstd_version)
        add("libidn2/", info.libidn)
        add("", info.libssh_version)
        add("nghttp2/", info.nghttp2_version)
        return parts.joined(separator: " ")
    }
}
