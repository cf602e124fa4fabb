
/// A sample's `KEY.json` in a shard: only what stays the same from run to run for the same
/// input and the same server bytes (no timings, no attempt counts, no cache outcome), with keys
/// in a fixed order, so that shards are reproducible:
///
///     {"key":"000000_000007","url":"https://…/a.jpg","caption":"a cat","format":"jpeg",
///      "original_width":4000,"original_height":3000,"width":256,"height":256,
///      "sha256":"…","columns":{"id":"7"}}
///
/// `format`, `original_width` and `original_height` are the downloaded image's; `width` and
/// `height` the image member's (the same as stored for original bytes, whose EXIF orientation is
/// left to the reader); `sha256` is of the downloaded
/// bytes. `caption` is there when the list has a caption column, `columns` when it is a table.
enum SampleRecord {
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
        if let row = report.row { json.add("columns", json: row.columnsJSON) }
        return json.line
    }
}
