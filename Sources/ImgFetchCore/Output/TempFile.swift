import FoundationEssentials
import Glibc

/// A body's temp file in the output directory: created exclusively, never followed through a
/// symlink, and removed unless it was committed to its final path.
///
/// The first `memoryLimit` bytes written are held in memory, and a body that fits is written to
/// the file in one call by `writeOut()`: a small image costs one `write` instead of one per
/// network chunk, and the decoder reads it from memory instead of opening and reading the file
/// again. A larger body streams to the file from the moment it outgrows the limit.
///
/// Ownership moves from the engine thread (which writes it) to the decode stage (which commits
/// it); it is never used by two threads at once, hence `@unchecked Sendable`.
public final class TempFile: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32
    private var committed = false
    /// The body's bytes while it fits in memory (`heldCount` of them); nil once it streams to the file.
    private var held: UnsafeMutableRawBufferPointer?
    private var heldCount = 0
    /// The body outgrew `memoryLimit`: every write goes to the file.
    private var streaming = false
    /// The errno of a failed `writeOut`, repeated to later callers: the file is incomplete.
    private var writeOutError: Int32?
    /// The run's budget for held bytes; `held`'s whole capacity is reserved from it. Nil: no bound
    /// but `memoryLimit` (copies and tests).
    private let budget: HeldBodyBudget?

    /// Most bytes of a body held in memory. Small enough that the bodies in flight and in the
    /// decode backlog (48 by default) hold a few MiB at most; large enough for typical web images.
    static let memoryLimit = 128 << 10

    /// What committing did.
    public enum Commit: Sendable {
        case saved
        /// `skip` policy and a file was already at the final path; the temp file was removed.
        case existed
    }

    private init(path: String, descriptor: Int32, budget: HeldBodyBudget?) {
        self.path = path
        self.descriptor = descriptor
        self.budget = budget
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        freeHeld()
        if !committed { unlink(path) }
    }

    /// Temp file names start with this, then the creating process's PID and `-`.
    static let namePrefix = ".imgfetch-"

    /// Creates `DIR/.imgfetch-PID-RANDOM.part` with `O_CREAT|O_EXCL|O_NOFOLLOW`; the mode respects
    /// the umask. Bytes held in memory are taken from `budget` while it has room.
    static func create(in directory: String, budget: HeldBodyBudget? = nil) throws(DownloadError) -> TempFile {
        for _ in 0..<8 {
            let name = "\(namePrefix)\(getpid())-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".part"
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd >= 0 { return TempFile(path: path, descriptor: fd, budget: budget) }
            if errno != EEXIST { throw DownloadError(.filesystem, "cannot create a temp file in \(directory): \(Errno.describe())") }
        }
        throw DownloadError(.filesystem, "cannot create a unique temp file in \(directory)")
    }

    /// Removes temp files that runs killed with SIGKILL (or a power loss) left in `directory`. The
    /// PID in each name tells whether its creator still runs; a live run's temp files are kept.
    /// Returns how many were removed.
    @discardableResult
    public static func removeStale(in directory: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(namePrefix) {
            let rest = name.dropFirst(namePrefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0, pid != getpid() else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// The open write descriptor, for writers that stream into the file themselves (and never call
    /// `write`, whose bytes may still be held in memory); -1 once closed.
    var writeDescriptor: Int32 {
        precondition(heldCount == 0, "bytes given to write(_:) are still held in memory")
        return descriptor
    }

    /// Appends all of `bytes`; returns errno on failure.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        if !streaming && heldCount + bytes.count <= Self.memoryLimit && hold(bytes) { return nil }
        if !streaming {
            // Outgrew memory (or the run's budget): what is held goes to the file, and from here on
            // the body streams there.
            streaming = true
            let code = heldCount > 0 ? writeAll(UnsafeRawBufferPointer(rebasing: held![..<heldCount])) : nil
            freeHeld()
            heldCount = 0
            if let code { return code }
        }
        return writeAll(bytes)
    }

    /// Empties the file for a new attempt.
    func truncate() {
        heldCount = 0
        guard streaming else { return }
        _ = ftruncate(descriptor, 0)
        _ = lseek(descriptor, 0, SEEK_SET)
    }

    /// The body is complete: closes the descriptor, unless the body is held in memory for `writeOut`.
    func finishWriting() {
        guard heldCount == 0 else { return }
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// Calls `body` with the complete body: its bytes when they are held in memory, else the file.
    func withContents<T>(_ body: (ImageSource) -> T) -> T {
        guard let held, heldCount > 0 else { return body(.file(path: path)) }
        return body(.memory(UnsafeRawBufferPointer(rebasing: held[..<heldCount])))
    }

    /// Makes the file complete: writes a body held in memory in one call (once; its bytes stay
    /// readable through `withContents`) and closes the descriptor. Placing the file does this first.
    func writeOut() throws(DownloadError) {
        if writeOutError == nil, heldCount > 0, descriptor >= 0 {
            writeOutError = writeAll(UnsafeRawBufferPointer(rebasing: held![..<heldCount]))
        }
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        if let code = writeOutError {
            throw DownloadError(.filesystem, "cannot write temp file \(path): \(Errno.describe(code))")
        }
    }

    /// Appends `bytes` to the held ones; false, holding nothing more, when the budget has no room.
    private func hold(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let needed = heldCount + bytes.count
        if needed > held?.count ?? 0 {
            // At least 32 KiB, doubling, capped at the limit: a small image takes one or two allocations.
            let old = held?.count ?? 0
            let capacity = min(Self.memoryLimit, max(needed, old * 2, 32 << 10))
            if let budget, !budget.reserve(capacity - old) { return false }
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            if let held, heldCount > 0 { grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: held[..<heldCount])) }
            held?.deallocate()
            held = grown
        }
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (held!.baseAddress! + heldCount).copyMemory(from: source, byteCount: bytes.count)
        }
        heldCount = needed
        return true
    }

    /// Frees the held bytes and gives their capacity back to the budget.
    private func freeHeld() {
        guard let held else { return }
        budget?.release(held.count)
        held.deallocate()
        self.held = nil
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Moves the temp file to `finalPath` atomically; the temp file is gone afterwards.
    /// With `overwrite` an existing file is replaced; otherwise an existing file wins and is left untouched.
    public func commit(to finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        let outcome = try place(at: finalPath, overwrite: overwrite)
        unlink(path)
        committed = true
        return outcome
    }

    /// Gives `finalPath` this file's content atomically and keeps the temp file, so that it can be
    /// placed under more names. With `overwrite` an existing file is replaced (hard link to a side
    /// name, then rename); otherwise an existing file wins (a hard link fails on EEXIST, and never
    /// follows a symlink planted at the final path).
    public func place(at finalPath: String, overwrite: Bool) throws(DownloadError) -> Commit {
        try writeOut()
        let target = overwrite ? Self.sideName(for: path) : finalPath
        if link(path, target) != 0 {
            switch errno {
            case EEXIST where !overwrite:
                return .existed
            case EPERM, ENOTSUP, EXDEV, EMLINK:
                // No hard links on this file system: place a full copy instead.
                return try TempFile.copy(of: path, in: Self.directory(of: path)).commit(to: finalPath, overwrite: overwrite)
            default:
                throw DownloadError(.filesystem, "cannot write \(finalPath): \(Errno.describe())")
            }
        }
        guard overwrite else { return .saved }
        guard rename(target, finalPath) == 0 else {
            let reason = Errno.describe()
            unlink(target)
            throw DownloadError(.filesystem, "cannot write \(finalPath): \(reason)")
        }
        return .saved
    }

    /// A new temp file in `directory` with the bytes of the file at `source`.
    static func copy(of source: String, in directory: String) throws(DownloadError) -> TempFile {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw DownloadError(.filesystem, "cannot read \(source): \(Errno.describe())") }
        defer { close(input) }
        let copy = try create(in: directory)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw DownloadError(.filesystem, "cannot read \(source): \(Errno.describe())") }
            if count == 0 { return copy }
            if let code = buffer.withUnsafeBytes({ copy.write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }) {
                throw DownloadError(.filesystem, "cannot write \(copy.path): \(Errno.describe(code))")
            }
        }
    }

    private static func sideName(for path: String) -> String {
        path + "." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}

/// errno as text.
enum Errno {
    static func describe(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
