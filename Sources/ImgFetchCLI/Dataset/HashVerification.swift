import ImgFetchCore

/// `--verify-hash COLUMN[:ALGORITHM]`, img2dataset's `--verify_hash`: each row's body is checked
/// against the hex digest in its column, and a body that differs is not kept (class
/// `hash-mismatch`). A row whose column holds no digest of the algorithm's length fails before
/// any request, as an invalid row.
struct HashVerification: Sendable, Equatable {
    let column: String
    let algorithm: DigestAlgorithm

    /// What a row expects.
    enum Expectation: Equatable {
        /// Lowercase hex.
        case digest(String)
        /// Why the row's column cannot be checked against.
        case unusable(String)
    }

    func expectation(of row: TableRow?) -> Expectation {
        guard let row, let members = try? JSONObjectScanner.members(of: Array(row.columnsJSON.utf8)),
              let value = members.first(where: { $0.key == column })?.value, value != "null" else {
            return .unusable("no value in column '\(column)' for --verify-hash")
        }
        let text = (JSONObjectScanner.string(value) ?? value).trimmingWhitespace
        guard !text.isEmpty else { return .unusable("no value in column '\(column)' for --verify-hash") }
        let isHex = text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
        guard isHex, text.utf8.count == algorithm.hexLength else {
            let shown = text.count > 40 ? String(text.prefix(37)) + "..." : text
            return .unusable("column '\(column)' holds '\(ResultLine.clean(shown))', not \(algorithm == .md5 ? "an" : "a") "
                + "\(algorithm.displayName) (\(algorithm.hexLength) hex digits) for --verify-hash")
        }
        return .digest(text.lowercased())
    }

    /// `result`, failed as `hash-mismatch` when it saved a body whose digest is not `expected`
    /// (or was not taken: nothing unchecked is kept).
    func check(_ result: DownloadResult, expected: String) -> DownloadResult {
        guard result.status == .saved, result.bodyDigests[algorithm] != expected else { return result }
        let actual = result.bodyDigests[algorithm].map { "is \($0.prefix(16))…" } ?? "was not taken"
        return .failed(DownloadError(.hashMismatch, "the body's \(algorithm.displayName) \(actual), "
                           + "column '\(column)' says \(expected.prefix(16))…; not kept"),
                       attempts: result.attempts, httpStatus: result.httpStatus, httpVersion: result.httpVersion)
    }
}
