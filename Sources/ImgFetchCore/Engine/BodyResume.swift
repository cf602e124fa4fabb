/// Where a body that was cut off (a reset, a timeout, a stream error) continues, as curl's `-C -`
/// and wget's `-c` do: the next attempt asks for the rest with `Range: bytes=N-` and
/// `If-Range: VALIDATOR`, and a `206` whose `Content-Range` starts at N is appended to what the
/// temp file has (`Transfer.continuesBody`); a `200` (the image changed, or the server ignores
/// ranges) replaces it, and a `206` of another range is an error retried from the first byte.
/// The body is verified as any other, whole. Engine thread only.
struct BodyResume: Equatable {
    /// The hop whose response was cut off: the only URL the rest is asked of.
    let url: String
    /// The bytes kept, and the first asked for.
    let offset: Int64
    /// A strong `ETag`, or else `Last-Modified`: `If-Range` gets the rest only of the same bytes.
    let validator: String

    /// Bodies smaller than this start over: their retry costs little, and keeps a waiting retry
    /// from holding a descriptor.
    static let minimumSize: Int64 = 1 << 20

    /// The request header lines that ask for the rest.
    var headers: [String] { ["Range: bytes=\(offset)-", "If-Range: \(validator)"] }

    /// Where the next attempt of `transfer` continues, after its attempt failed transiently: only
    /// a 2xx body of at least `minimumSize` (as announced, or as received), partly received, with
    /// a validator, of a request whose body is not cut on purpose.
    static func after(_ transfer: Transfer) -> BodyResume? {
        let received = transfer.body.bytes
        guard (200..<300).contains(transfer.response.status), received > 0, !transfer.request.truncatesBody,
              transfer.request.store == nil else { return nil }
        let total = transfer.response.contentLength.map { $0 + transfer.bodyOffset } ?? received
        guard max(total, received) >= minimumSize, received < total || transfer.response.contentLength == nil,
              let validator = validator(etag: transfer.value(of: "etag"), lastModified: transfer.value(of: "last-modified")) else {
            return nil
        }
        return BodyResume(url: transfer.currentURL.normalized, offset: received, validator: validator)
    }

    /// A strong entity tag (a weak `W/"…"` one cannot validate a range, RFC 9110 §13.1.5), or the date.
    static func validator(etag: String?, lastModified: String?) -> String? {
        if let etag, etag.hasPrefix("\""), etag.count >= 2, etag.hasSuffix("\"") { return etag }
        return lastModified
    }

    /// The first byte of a `Content-Range: bytes FIRST-LAST/LENGTH` value; nil for anything else.
    static func start(ofContentRange value: String) -> Int64? {
        guard value.hasPrefix("bytes ") else { return nil }
        let range = value.dropFirst(6).prefix { $0 != "/" }
        let parts = range.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
              !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(parts[0])
    }
}
