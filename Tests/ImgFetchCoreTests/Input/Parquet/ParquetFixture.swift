import Foundation
import XCTest

/// LAION-shaped Parquet files written by pyarrow (`Scripts/test-support/make_parquet.py`, in the
/// tests' venv that `Scripts/install-deps` makes), into a temporary directory.
enum ParquetFixture {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Writes a file of `rows` rows with `options` (`--codec zstd`, `--no-dictionary`, …) and returns its path.
    static func write(rows: Int, _ options: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let python = packageRoot.appendingPathComponent(".venv-tests/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("no tests venv at \(python.path): run Scripts/install-deps", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-parquet-\(UUID().uuidString).parquet").path
        let process = Process()
        process.executableURL = python
        process.arguments = [packageRoot.appendingPathComponent("Scripts/test-support/make_parquet.py").path, out,
                             "--rows", String(rows)] + options
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "make_parquet.py failed", file: file, line: line)
        return out
    }
}
