import Glibc
import ImgFetchCore

/// Paths between the gallery page and the files it shows, so that its links work from
/// `file://` wherever the page and the output directory are (`--gallery report.html -o pics`,
/// `--gallery /tmp/g.html -o ../pics`, or the page inside the output directory).
enum RelativePath {
    /// The segments of an absolute path, normalized by hand: empty and `.` segments dropped, `..`
    /// removing the one before (never above the root).
    static func segments(ofAbsolute path: String) -> [String] {
        var segments: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(String(segment))
            }
        }
        return segments
    }

    /// The segments that lead from the directory `from` to `to`, both absolute: `..` up to their
    /// common ancestor, then down (`/a/b` to `/a/c/d.png` is `../c/d.png`).
    static func segments(from directory: String, to target: String) -> [String] {
        let base = segments(ofAbsolute: directory)
        let destination = segments(ofAbsolute: target)
        var common = 0
        while common < base.count && common < destination.count && base[common] == destination[common] { common += 1 }
        return Array(repeating: "..", count: base.count - common) + destination[common...]
    }

    /// The absolute, symlink-free form of the existing directory `path` (`realpath`), so that the
    /// page's directory and the output directory compare alike; nil with the reason when it fails.
    static func resolvedDirectory(_ path: String) -> Result<String, SetupError> {
        guard let resolved = realpath(path.isEmpty ? "." : path, nil) else {
            return .failure(SetupError(message: Errno.describe()))
        }
        defer { free(resolved) }
        return .success(String(cString: resolved))
    }

    /// The directory part of `path` (`.` for a bare name), as `dirname` gives it.
    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }
}
