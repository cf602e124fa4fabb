
/// A sample's `KEY.json` in a shard: only what stays the same from run to run for the same
/// input and the same server bytes (no timings, no attempt counts, no cache outcome), with keys
/// in a fixed order, so that shards are reproducible:
///
///     {"key":"000000_000007","url":"https://…/a.jpg","caption":"a cat","format":"jpeg",
///      "original_width":4000,"original_height":3000,"width":256,"height":256,
///      "sha256":"…","status":"success","error_message":null,"similarity":0.31,"id":"7"}
///
/// `format`, `original_width` and `original_height` are the downloaded image's; `width` and
/// `height` the image member's (the same as stored for original bytes, whose EXIF orientation is
/// left to the reader); `sha256` is of the downloaded bytes (`md5` or `sha512` instead with
/// `--hash`), and `exif`, with `--extract-exif`, a JSON object in a string. `caption` is there when the list has
/// a caption column. `status` and `error_message` are img2dataset's, with its meanings (a sample
/// in a tar is a success). A table's other columns follow at the top level, as img2dataset puts
/// them, with their types (Parquet's and JSON Lines' as they are, CSV's as strings), so that
/// loaders read `meta["similarity"]` from either tool; a column named like one of the fields
/// above keeps its value under `"columns"`.
public enum SampleRecord {
    /// What a sample's JSON holds besides the fixed fields: which hash of the body (`--hash`,
    /// img2dataset's `--compute_hash`: the field is named after it), the EXIF (`--extract-exif`),
    /// and a column left out (`--verify-hash`'s, which img2dataset leaves out too: a sample's
    /// value of it is the hash the body was checked against).
    public struct Layout: Sendable, Equatable {
        public var hash: DigestAlgorithm = .sha256
        public var exif = false
        public var omittedColumn: String?

        public init(hash: DigestAlgorithm = .sha256, exif: Bool = false, omittedColumn: String? = nil) {
            self.hash = hash
            self.exif = exif
            self.omittedColumn = omittedColumn
        }

        /// The fields imgfetch writes itself: a column of the same name goes under `"columns"`.
        public var ownFields: Set<String> {
            var fields: Set<String> = ["key", "url", "caption", "format", "original_width", "original_height", "width",
                                       "height", "status", "error_message", "columns", hash.rawValue]
            if exif { fields.insert("exif") }
            return fields
        }
    }

    static func json(_ report: ItemReport, key: String, layout: Layout = Layout()) -> String {
        let result = report.result
        let image = result.image
        var json = JSONWriter()
        json.add("key", key)
        json.add("url", report.displayURL)
        if let row = report.row, let caption = row.caption { json.add("caption", caption) }
        json.add("format", result.format?.rawValue)
        json.add("original_width", image?.width)
        json.add("original_height", image?.height)
        json.add("width", image?.outputWidth ?? image?.width)
        json.add("height", image?.outputHeight ?? image?.height)
        json.add(layout.hash.rawValue, result.bodyDigests[layout.hash])
        json.add("status", "success")
        json.add("error_message", json: nil)
        // A JSON object in a string, as img2dataset's loaders `json.loads` it.
        if layout.exif { json.add("exif", result.exif ?? "{}") }
        if let row = report.row, let members = try? JSONObjectScanner.members(of: Array(row.columnsJSON.utf8)) {
            let own = layout.ownFields
            var colliding = JSONWriter()
            for member in members where member.key != layout.omittedColumn {
                if own.contains(member.key) {
                    colliding.add(member.key, json: member.value)
                } else {
                    json.add(member.key, json: member.value)
                }
            }
            if !colliding.isEmpty { json.add("columns", json: colliding.object) }
        }
        return json.line
    }
}
