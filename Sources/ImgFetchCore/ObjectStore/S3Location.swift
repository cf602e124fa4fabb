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
    public static func parse(_ text: String) -> Result<S3Location, ParseError> {
        guard text.hasPrefix("s3://") else { return .failure(ParseError("it does not start with s3://")) }
        var path = Substring(text.dropFirst(5))
        while path.hasSuffix("/") { path = path.dropLast() }
        let bucket = path.prefix { $0 != "/" }
        let prefix = path.dropFirst(bucket.count + 1)
        if let problem = bucketProblem(bucket) { return .failure(ParseError(problem)) }
        if prefix.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .failure(ParseError("the prefix has a control character"))
        }
        if !prefix.isEmpty, prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            return .failure(ParseError("the prefix has an empty, '.' or '..' segment"))
        }
        if prefix.utf8.count > 512 { return .failure(ParseError("the prefix is longer than 512 bytes")) }
        return .success(S3Location(bucket: String(bucket), prefix: String(prefix)))
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
