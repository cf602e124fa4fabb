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
    /// The whole body's length, when the cut-off response announced it: the rest must end there.
    var total: Int64?

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
        return BodyResume(url: transfer.currentURL.normalized, offset: received, validator: validator,
                          total: transfer.response.contentLength.map { $0 + transfer.bodyOffset })
    }

    /// A strong entity tag (a weak `W/"…"` one cannot validate a range, RFC 9110 §13.1.5), or the date.
    static func validator(etag: String?, lastModified: String?) -> String? {
        if let etag, etag.hasPrefix("\""), etag.count >= 2, etag.hasSuffix("\"") { return etag }
        return lastModified
    }

    /// Whether a `206`'s `Content-Range: bytes FIRST-LAST/LENGTH` is the rest of this body: from
    /// `offset` to its end, of the length the cut-off response announced (when it did). A server
    /// that sends a shorter range than asked would otherwise pass for the whole image.
    func isRest(_ contentRange: String) -> Bool {
        guard let range = Self.range(ofContentRange: contentRange), range.first == offset else { return false }
        guard let length = range.total else { return total == nil || range.last + 1 == total }
        return range.last + 1 == length && (total == nil || length == total)
    }

    /// The bytes of a `Content-Range: bytes FIRST-LAST/LENGTH` value (LENGTH `*`: nil); nil for anything else.
    static func range(ofContentRange value: String) -> (first: Int64, last: Int64, total: Int64?)? {
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        func number(_ text: Substring) -> Int64? {
            !text.isEmpty && text.count <= 18 && text.utf8.allSatisfy({ (48...57).contains($0) }) ? Int64(text) : nil
        }
        guard bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]), first <= last else { return nil }
        if parts[1] == "*" { return (first, last, nil) }
        guard let total = number(parts[1]), last < total else { return nil }
        return (first, last, total)
    }
}
