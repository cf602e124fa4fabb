import Glibc

/// What a list's name and first line say about its format, for a run that was not told
/// (`--input-format` not given): `photos.csv` is a table, and a `urls.txt` whose first line is
/// `url,caption` is a table given the wrong name, which is better said before any request than as
/// one failed item per row.
public enum ListSniffer {
    /// The format a list's file name says: `.csv`, `.tsv`, `.jsonl` or `.ndjson` (in any case);
    /// `txt` for any other file; nil for stdin (`-`), which says nothing.
    public static func format(ofListNamed path: String) -> InputFormat? {
        guard path != "-" else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return .txt }
        switch name[name.index(after: dot)...].lowercased() {
        case "csv": return .csv
        case "tsv": return .tsv
        case "jsonl", "ndjson": return .jsonl
        case "parquet": return .parquet
        default: return .txt
        }
    }

    /// The table a list of URLs looks like, from its first line that is neither blank nor a
    /// comment: a JSON object (`jsonl`), or a header row of several columns (`csv` with commas,
    /// `tsv` with tabs) where a URL should be. Nil when the line starts as a URL does, or says
    /// nothing (it may be a list's honest mistake, reported as its line).
    public static func tableLook(ofFirstLine line: String) -> InputFormat? {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.hasPrefix("{") { return .jsonl }
        if ListSource.isURL(argument: String(trimmed)) { return nil }
        if trimmed.contains("\t") { return .tsv }
        if trimmed.contains(",") { return .csv }
        return nil
    }

    /// The first line of a regular file that is neither blank nor a comment, read with `pread`
    /// (the descriptor's offset does not move); nil for anything else, or when none is found in
    /// the first 64 KiB.
    public static func firstLine(of descriptor: Int32) -> String? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        for line in buffer[..<count].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            if text.hasSuffix("\r") { text.removeLast() }
            let content = text.drop { $0 == " " || $0 == "\t" }
            if content.isEmpty || content.hasPrefix("#") { continue }
            return text
        }
        return nil
    }
}
