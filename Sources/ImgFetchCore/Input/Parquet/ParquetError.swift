/// Why a Parquet file cannot be read, said so that the list's error names the file and the problem.
enum ParquetError: Error, Equatable, CustomStringConvertible {
    /// Not a Parquet file at all (no `PAR1` at both ends).
    case notParquet(String)
    /// The file ends inside something it promised.
    case truncated(String)
    /// Bytes that do not decode as what the format says they are.
    case malformed(String)
    /// Valid Parquet that imgfetch does not read (a codec, an encoding, a nested column).
    case unsupported(String)

    var description: String {
        switch self {
        case .notParquet(let why): "not a Parquet file: \(why)"
        case .truncated(let what): "truncated Parquet: the file ends inside \(what)"
        case .malformed(let what): "corrupt Parquet: \(what)"
        case .unsupported(let what): "unsupported Parquet: \(what)"
        }
    }
}
