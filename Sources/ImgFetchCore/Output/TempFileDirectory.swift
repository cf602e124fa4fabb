import CFileSystem
import Glibc
import Synchronization

/// The directory a run's temp files are made in, and which kind it takes: unnamed files
/// (`O_TMPFILE`) where the kernel, the file system and `/proc` allow them, named ones otherwise.
///
/// An unnamed file costs no name: no `getpid`/`getrandom` for one, no `unlink` after placing, and
/// nothing is left behind by a run killed with SIGKILL. It is named by `linkat` through
/// `/proc/self/fd/N`, so it needs `/proc`. Ext4, XFS, btrfs and tmpfs support it; some FUSE and
/// NFS mounts and kernels before 3.11 do not. The first file made here decides, and every later
/// one follows: one failed `open` (or one `access` of `/proc`) per directory, not per file.
///
/// Shared by the engine thread and the decode threads; its state is two atomics.
final class TempFileDirectory: Sendable {
    /// The kinds of temp file.
    enum Kind: UInt8, Sendable {
        /// `O_TMPFILE`: no name until it is placed.
        case unnamed = 1
        /// `DIR/.imgfetch-PID-N.part`, created with `O_EXCL`, linked into place, then unlinked.
        case named = 2
    }

    let path: String
    /// 0 until the first file decides, then a `Kind`.
    private let decided: Atomic<UInt8>
    /// Named files' next number, from a random start: names are unique in the process without a
    /// `getrandom` per file, and stay hard to guess.
    private let nextNumber: Atomic<UInt64>
    /// This process's, in every name: `TempFile.removeStale` keeps the files of live runs.

    /// `kind` forces a kind (tests of the named files; copies where a file system has no hard
    /// links); nil decides at the first file.
    init(path: String, kind: Kind? = nil) {
        self.path = path
        decided = Atomic(kind?.rawValue ?? 0)
        nextNumber = Atomic(UInt64.random(in: 0...UInt64.max))
    }

    /// The kind this directory's files take; nil before the first file.
    var kind: Kind? { Kind(rawValue: decided.load(ordering: .relaxed)) }

    /// A new, empty temp file open for reading and writing; its mode is 0666 less the umask. Bytes
    /// held in memory are taken from `budget` while it has room.
    func create(budget: HeldBodyBudget? = nil) throws(DownloadError) -> TempFile {
        if kind != .named {
            let fd = CFileSystem_openUnnamed(path, O_RDWR | O_CLOEXEC, 0o666)
            if fd >= 0 {
                if kind == .unnamed || canLinkThroughProc(fd) {
                    decided.store(Kind.unnamed.rawValue, ordering: .relaxed)
                    return TempFile(folder: self, name: nil, descriptor: fd, budget: budget)
                }
                close(fd)
                decided.store(Kind.named.rawValue, ordering: .relaxed)
            } else if Self.lacksUnnamedFiles(errno) {
                decided.store(Kind.named.rawValue, ordering: .relaxed)
            } else {
                throw DownloadError.writing("a temp file in \(path)", errno)
            }
        }
        return try createNamed(budget: budget)
    }

    /// A new temp file with the bytes of the file at `source`.
    func copy(of source: String) throws(DownloadError) -> TempFile {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw DownloadError(.filesystem, "cannot read \(source): \(Errno.describe())") }
        defer { close(input) }
        let copy = try create()
        try copy.append(contentsOf: input, describedAs: source)
        return copy
    }

    /// A new name for a file in the directory, `DIR/.imgfetch-PID@HOST-N.part`: for named temp files
    /// and for the side name an overwriting placement links before its rename.
    func newName() -> String {
        let number = nextNumber.add(1, ordering: .relaxed).newValue
        return OutputPaths.join(path.hasSuffix("/") ? String(path.dropLast()) : path,
                                "\(TempFile.namePrefix)\(TempFile.processTag)-\(String(number, radix: 36)).part")
    }

    /// Whether a kernel or file system without `O_TMPFILE` refused it with `code`: EOPNOTSUPP
    /// (the file system), EISDIR (a kernel before 3.11, which sees `O_DIRECTORY` alone), EINVAL.
    static func lacksUnnamedFiles(_ code: Int32) -> Bool {
        code == EOPNOTSUPP || code == EISDIR || code == EINVAL
    }

    /// Whether `/proc/self/fd/N` names the unnamed file `fd`, as `TempFile.place` needs.
    private func canLinkThroughProc(_ fd: Int32) -> Bool {
        access("/proc/self/fd/\(fd)", F_OK) == 0
    }

    private func createNamed(budget: HeldBodyBudget?) throws(DownloadError) -> TempFile {
        for _ in 0..<8 {
            let name = newName()
            let fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd >= 0 { return TempFile(folder: self, name: name, descriptor: fd, budget: budget) }
            if errno != EEXIST { throw DownloadError.writing("a temp file in \(path)", errno) }
        }
        throw DownloadError(.filesystem, "cannot create a unique temp file in \(path)")
    }
}
