/// Where an object-storage output goes: `s3://BUCKET/PREFIX` (`-o`). Every object's key is the
/// prefix, a slash and the file's name within the output (`s3://pics/run1` + `cat.jpg` →
/// key `run1/cat.jpg`); without a prefix, the name alone.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    /// Without a leading or trailing slash; empty for the bucket's top.
    public let prefix: String

    public init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// `s3://BUCKET[/PREFIX][/]`, or why it is not one. The bucket follows S3's naming rules
    /// (3-63 lowercase letters, digits, dots and hyphens); the prefix has no empty, `.` or `..`
    /// segment and no control character.
    ///
    /// Checked as bytes, not Characters: a `/` followed by a combining mark is one Character, and
    /// would hide a `..` segment from a Character split.
    public static func parse(_ text: String) -> Result<S3Location, ParseError> {
        var bytes = Array(text.utf8)
        guard bytes.count >= 5, String(decoding: bytes[..<5], as: UTF8.self).lowercased() == "s3://" else {
            return .failure(ParseError("it does not start with s3://"))
        }
        bytes.removeFirst(5)
        while bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        let slash = bytes.firstIndex(of: UInt8(ascii: "/"))
        let bucket = String(decoding: bytes[..<(slash ?? bytes.count)], as: UTF8.self)
        let prefix = slash.map { Array(bytes[($0 + 1)...]) } ?? []
        if let problem = bucketProblem(Substring(bucket)) { return .failure(ParseError(problem)) }
        if prefix.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .failure(ParseError("the prefix has a control character"))
        }
        let segments = prefix.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if !prefix.isEmpty, segments.contains(where: { $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) }) {
            return .failure(ParseError("the prefix has an empty, '.' or '..' segment"))
        }
        if prefix.count > 512 { return .failure(ParseError("the prefix is longer than 512 bytes")) }
        return .success(S3Location(bucket: bucket, prefix: String(decoding: prefix, as: UTF8.self)))
    }

    public struct ParseError: Error, Sendable {
        public let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func bucketProblem(_ bucket: Substring) -> String? {
        if bucket.isEmpty { return "no bucket name (s3://BUCKET/PREFIX)" }
        guard (3...63).contains(bucket.utf8.count) else { return "a bucket name has 3 to 63 characters" }
        let allowed = bucket.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
        guard allowed else { return "a bucket name has only lowercase letters, digits, '.' and '-'" }
        let ends = [bucket.utf8.first!, bucket.utf8.last!]
        guard ends.allSatisfy({ $0 != 0x2E && $0 != 0x2D }) else { return "a bucket name starts and ends with a letter or digit" }
        return nil
    }

    /// The key of the object named `name` (a path relative to the output, `/`-separated).
    public func key(_ name: String) -> String {
        prefix.isEmpty ? name : prefix + "/" + name
    }

    /// `s3://BUCKET/KEY` of the object named `name`: what result lines show as its path.
    public func url(_ name: String) -> String {
        "s3://\(bucket)/\(key(name))"
    }

    public var description: String {
        prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)"
    }
}
