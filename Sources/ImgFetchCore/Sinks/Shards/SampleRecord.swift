
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
/// left to the reader); `sha256` is of the downloaded bytes. `caption` is there when the list has
/// a caption column. `status` and `error_message` are img2dataset's, with its meanings (a sample
/// in a tar is a success). A table's other columns follow at the top level, as img2dataset puts
/// them, with their types (Parquet's and JSON Lines' as they are, CSV's as strings), so that
/// loaders read `meta["similarity"]` from either tool; a column named like one of the fields
/// above keeps its value under `"columns"`.
public enum SampleRecord {
    /// The fields imgfetch writes itself: a column of the same name goes under `"columns"`.
    public static let ownFields: Set<String> = ["key", "url", "caption", "format", "original_width", "original_height", "width",
                                         "height", "sha256", "status", "error_message", "columns"]

    static func json(_ report: ItemReport, key: String) -> String {
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
        json.add("sha256", result.bodySHA256)
        json.add("status", "success")
        json.add("error_message", json: nil)
        if let row = report.row, let members = try? JSONObjectScanner.members(of: Array(row.columnsJSON.utf8)) {
            var colliding = JSONWriter()
            for member in members {
                if ownFields.contains(member.key) {
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
