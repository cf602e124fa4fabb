import Foundation
import Glibc

/// A fresh directory under /tmp for one test's output, removed with everything in it.
struct ScratchDirectory {
    let path: String

    init(prefix: String = "imgfetch-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: created)
    }

    /// Every name in the directory but the cache index's folder, sorted.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0 != ".imgfetch" }.sorted()
    }

    /// The finished files (names not starting with a dot), sorted.
    func finalFiles() -> [String] { entries().filter { !$0.hasPrefix(".") } }

    /// Left-over temp files (`.imgfetch-*`).
    func tempFiles() -> [String] { entries().filter { $0.hasPrefix(".imgfetch-") } }

    func file(_ name: String) -> String { path + "/" + name }

    func contents(of name: String) -> Data? { FileManager.default.contents(atPath: file(name)) }

    /// The inode of `name`, or nil when it does not exist.
    func inode(of name: String) -> UInt? {
        var info = stat()
        return stat(file(name), &info) == 0 ? UInt(info.st_ino) : nil
    }

    /// What this process holds open in the directory but the cache index's folder (`/proc/self/fd`
    /// links into it; an unnamed temp file shows as `DIR/#INODE (deleted)`): temp files not yet released.
    func openFiles() -> [String] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                  target.hasPrefix(path + "/"), !target.hasPrefix(path + "/.imgfetch/") else { return nil }
            return target
        }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
