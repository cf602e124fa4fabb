import Foundation
import XCTest

/// A tmpfs of a given size mounted in a test's scratch directory, for full-disk tests (they run
/// as root; elsewhere they are skipped).
struct SmallDisk {
    let url: URL

    var path: String { url.path }

    /// Mounts a tmpfs of `size` (mount's syntax: `256k`, `20m`) at `scratch/name`.
    init(in scratch: ScratchDirectory, name: String, size: String) throws {
        url = scratch.file(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        guard runQuietly("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", url.path]) == 0 else {
            throw XCTSkip("cannot mount a tmpfs here (needs root)")
        }
    }

    func unmount() {
        _ = runQuietly("/bin/umount", [url.path])
    }
}

/// Runs `tool` with its output thrown away; its exit status, or -1 when it cannot start.
func runQuietly(_ tool: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}
