
/// One JSON object per list item, on one line, with keys in a fixed order.
public enum JSONLine {
    public static func encode(_ item: ItemReport) -> String {
        let result = item.result
        var json = JSONWriter()
        json.add("url", item.displayURL)
        json.add("status", result.status.rawValue)
        json.add("paths", result.paths)
        json.add("http_status", result.httpStatus)
        json.add("http_version", result.httpVersion?.rawValue)
        json.add("bytes", Int(result.bytes))
        json.add("format", result.format?.rawValue)
        json.add("width", result.image?.width)
        json.add("height", result.image?.height)
        json.add("channels", result.image?.channels)
        json.add("bit_depth", result.image?.bitDepth)
        json.add("verified", result.image?.verified == true)
        json.add("output_width", result.image?.outputWidth)
        json.add("output_height", result.image?.outputHeight)
        json.add("attempts", result.attempts)
        json.add("duration_ms", Int((result.duration * 1000).rounded()))
        json.add("coalesced", result.coalesced)
        json.add("cache", result.cache?.rawValue)
        json.add("skip_reason", result.skipReason)
        if let made = result.made {
            json.add("made") { member in
                member.add("status", made.status.rawValue)
                member.add("http_status", made.httpStatus)
                member.add("bytes", Int(made.bytes))
            }
        } else {
            json.add("made", json: nil)
        }
        if let error = result.error {
            json.add("error") { member in
                member.add("class", error.kind.rawValue)
                member.add("message", error.message)
            }
        } else {
            json.add("error", json: nil)
        }
        if let row = item.row {
            // A table's row: its caption and every other column, as strings, in header order.
            json.add("caption", row.caption)
            json.add("columns", json: row.columnsJSON)
        }
        json.add("line") { line in
            line.add("file", item.position.listName)
            line.add("line", item.position.line)
        }
        if let key = item.sampleKey { json.add("key", key) }
        return json.line
    }
}
