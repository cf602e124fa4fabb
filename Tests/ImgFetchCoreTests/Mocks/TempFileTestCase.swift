import Foundation
import XCTest
@testable import ImgFetchCore

/// Base class for tests that must hold for both kinds of temp file: `forEachKind` runs a test's
/// body with unnamed files (`O_TMPFILE`, which /tmp here supports), then with the named ones a
/// file system without them gets, each in an empty directory of its own.
///
/// (A subclass per kind would be neater, but on Linux XCTest finds no inherited test methods.)
class TempFileTestCase: XCTestCase {
    var scratch: ScratchDirectory!
    /// The kind the current pass of `forEachKind` tests.
    private(set) var kind = TempFileDirectory.Kind.unnamed
    /// The current pass's directory, and its temp files.
    private(set) var directory = ""
    private(set) var folder: TempFileDirectory!
    /// Inside a pass of `forEachKind`: its failures name the kind.
    private var inPass = false

    /// Prefix of the scratch directory's name, so leftovers say which suite made them.
    var scratchPrefix: String { "imgfetch-tempfile" }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: scratchPrefix)
    }

    override func tearDown() {
        scratch.remove()
    }

    func forEachKind(_ body: () throws -> Void) throws {
        for kind in [TempFileDirectory.Kind.unnamed, .named] {
            self.kind = kind
            directory = scratch.file("\(kind)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            folder = TempFileDirectory(path: directory, kind: kind)
            inPass = true
            defer { inPass = false }
            try body()
        }
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
                                expected: Bool) {
        super.recordFailure(withDescription: inPass ? "[\(kind) temp files] \(description)" : description,
                            inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// Writes `bytes` in chunks, as the network delivers them; the errno of a failed write.
    func write(_ bytes: [UInt8], to temp: TempFile, chunk: Int = 16 << 10) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            if let code = bytes[offset..<end].withUnsafeBytes({ temp.write($0) }) { return code }
            offset = end
        }
        return nil
    }

    /// What the temp file holds on disk, through its name or, unnamed, its descriptor.
    func bytesOnDisk(_ temp: TempFile) -> [UInt8] {
        bytes(atPath: temp.path ?? "/proc/self/fd/\(temp.descriptor)") ?? []
    }

    func bytes(atPath path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// Names in the current pass's directory, sorted, hidden ones included.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// What this process holds open in the current pass's directory (see `ScratchDirectory.openFiles`).
    func openFiles() -> [String] {
        scratch.openFiles().filter { $0.hasPrefix(directory + "/") }
    }
}
