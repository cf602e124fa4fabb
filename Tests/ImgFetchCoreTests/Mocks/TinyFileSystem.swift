import Foundation
import XCTest

/// A tmpfs of a few KiB mounted at a new directory, to fill a disk for real. Mounting needs
/// root: where it fails, the test is skipped.
struct TinyFileSystem {
    let path: String

    init(at path: String, bytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path]) == 0 else {
            throw XCTSkip("cannot mount a tmpfs here (needs root)")
        }
    }

    /// Unmounts it; lazily if something still holds a file open there, so the scratch directory can go.
    func unmount() {
        if Self.run("/bin/umount", [path]) != 0 { _ = Self.run("/bin/umount", ["-l", path]) }
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
