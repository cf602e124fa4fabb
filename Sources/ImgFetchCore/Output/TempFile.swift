import FoundationEssentials
import Glibc

/// A body's temp file in the output directory, removed unless it was placed at a final path.
///
/// It is unnamed (`O_TMPFILE`) where the directory allows, named (`.imgfetch-PID-N.part`, created
/// exclusively, never followed through a symlink) otherwise; `TempFileDirectory` decides, and
/// `TempFile+Placement` puts either kind at its final path atomically.
///
/// The first `memoryLimit` bytes written are held in memory, and a body that fits is written to
/// the file in one call by `writeOut()`: a small image costs one `write` instead of one per
/// network chunk, and the decoder reads it from memory instead of opening and reading the file
/// again. A larger body streams to the file from the moment it outgrows the limit.
///
/// Ownership moves from the engine thread (which writes it) to the decode stage (which commits
/// it); it is never used by two threads at once, hence `@unchecked Sendable`.
public final class TempFile: @unchecked Sendable {
    /// The directory the file is in, and is placed in.
    let folder: TempFileDirectory
    /// `DIR/.imgfetch-PID-N.part`; nil for an unnamed file, which has no name until it is placed.
    public let path: String?
    /// Open for reading and writing. An unnamed file's only handle, so it stays open until the file
    /// goes away; a named file's is closed once the body is complete (on NFS, `close` is what sends
    /// the data to the server before `link` names it). -1 once closed.
    private(set) var descriptor: Int32
    /// Placed for good: a named file's name is gone, and `deinit` must not unlink it again.
    var committed = false
    /// The body's bytes while it fits in memory (`heldCount` of them); nil once it streams to the file.
    private var held: UnsafeMutableRawBufferPointer?
    private var heldCount = 0
    /// The body outgrew `memoryLimit`: every write goes to the file.
    private var streaming = false
    /// `writeOut` wrote the held bytes to the file (they stay in memory for readers).
    private var writtenOut = false
    /// The errno of a failed `writeOut`, repeated to later callers: the file is incomplete.
    private var writeOutError: Int32?
    /// The run's budget for held bytes; `held`'s whole capacity is reserved from it. Nil: no bound
    /// but `memoryLimit` (copies and tests).
    private let budget: HeldBodyBudget?

    /// Most bytes of a body held in memory. Small enough that the bodies in flight and in the
    /// decode backlog (48 by default) hold a few MiB at most; large enough for typical web images.
    static let memoryLimit = 128 << 10

    /// Named temp files start with this, then `processTag` and `-`.
    static let namePrefix = ".imgfetch-"

    /// This process's part of its temp files' names: `PID@HOST`, HOST being 8 hex digits of the
    /// SHA-256 of the host name. Workers on several hosts may share one output directory (a
    /// cluster's file system); a PID says whether a run is alive only on its own host.
    public static let processTag: String = {
        var name = [UInt8](repeating: 0, count: 256)
        _ = name.withUnsafeMutableBufferPointer { gethostname(UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 255) }
        let hasher = DigestHasher()
        hasher.update(String(decoding: name.prefix { $0 != 0 }, as: UTF8.self))
        return "\(getpid())@\(hasher.finish().prefix(8))"
    }()

    /// How old another host's temp file must be before it is taken for a dead run's.
    static let otherHostStaleAge: TimeInterval = 24 * 3600

    /// Made by `TempFileDirectory.create`.
    init(folder: TempFileDirectory, name: String?, descriptor: Int32, budget: HeldBodyBudget?) {
        self.folder = folder
        path = name
        self.descriptor = descriptor
        self.budget = budget
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        freeHeld()
        if !committed, let path { unlink(path) }
    }

    /// A new temp file in `directory`, of the kind the directory supports (decided anew: the
    /// downloader and the thumbnailer keep one `TempFileDirectory` each instead).
    static func create(in directory: String, budget: HeldBodyBudget? = nil) throws(DownloadError) -> TempFile {
        try TempFileDirectory(path: directory).create(budget: budget)
    }

    /// Removes temp files that runs killed with SIGKILL (or a power loss) left in `directory`. The
    /// PID in each name tells whether its creator still runs; a live run's temp files are kept.
    /// A file of another host (its `@HOST` is not this one's) is kept until it is a day old: its
    /// PID means nothing here. (Unnamed files need none of this: the kernel frees them with their
    /// last descriptor.) Returns how many were removed.
    @discardableResult
    public static func removeStale(in directory: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        let ownHost = processTag[processTag.index(after: processTag.firstIndex(of: "@")!)...]
        var removed = 0
        for name in names where name.hasPrefix(namePrefix) {
            let rest = name.dropFirst(namePrefix.count)
            guard let dash = rest.firstIndex(of: "-") else { continue }
            let tag = rest[..<dash]
            let at = tag.firstIndex(of: "@")
            guard let pid = pid_t(tag[..<(at ?? tag.endIndex)]), pid > 0 else { continue }
            let path = directory + "/" + name
            if let at, tag[tag.index(after: at)...] != ownHost {
                var info = stat()
                guard stat(path, &info) == 0, Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec) > otherHostStaleAge else { continue }
            } else {
                guard pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// The open write descriptor, for writers that stream into the file themselves (and never call
    /// `write`, whose bytes may still be held in memory); -1 once closed.
    var writeDescriptor: Int32 {
        precondition(heldCount == 0, "bytes given to write(_:) are still held in memory")
        return descriptor
    }

    public var directory: String { folder.path }

    /// Where errors say the file is.
    var displayPath: String { path ?? "in \(directory)" }

    /// Appends all of `bytes`; returns errno on failure.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        if !streaming && heldCount + bytes.count <= Self.memoryLimit && hold(bytes) { return nil }
        if !streaming {
            // Outgrew memory (or the run's budget): what is held goes to the file, and from here on
            // the body streams there.
            streaming = true
            let code = heldCount > 0 ? FileDescriptorIO.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: held![..<heldCount])) : nil
            freeHeld()
            heldCount = 0
            if let code { return code }
        }
        return FileDescriptorIO.writeAll(descriptor, bytes)
    }

    /// Appends everything `input` holds from its start; `source` names it in errors.
    func append(contentsOf input: Int32, describedAs source: String) throws(DownloadError) {
        var writeError: Int32?
        let readError = FileDescriptorIO.forEachChunk(of: input, chunkSize: 64 << 10) { chunk in
            writeError = write(chunk)
            return writeError == nil
        }
        if let code = readError { throw DownloadError(.filesystem, "cannot read \(source): \(Errno.describe(code))") }
        if let code = writeError { throw DownloadError.writing("temp file \(displayPath)", code) }
    }

    /// Empties the file for a new attempt.
    func truncate() {
        heldCount = 0
        guard streaming else { return }
        _ = ftruncate(descriptor, 0)
        _ = lseek(descriptor, 0, SEEK_SET)
    }

    /// The body is complete: closes a named file's descriptor, unless the body is held in memory
    /// for `writeOut`.
    func finishWriting() {
        guard heldCount == 0, path != nil else { return }
        closeDescriptor()
    }

    /// Calls `body` with the complete body: its bytes when they are held in memory, else the file.
    func withContents<T>(_ body: (ImageSource) -> T) -> T {
        if let held, heldCount > 0 { return body(.memory(UnsafeRawBufferPointer(rebasing: held[..<heldCount]))) }
        if let path, descriptor < 0 { return body(.file(path: path)) }
        return body(.descriptor(descriptor))
    }

    /// Makes the file complete: writes a body held in memory in one call (once; its bytes stay
    /// readable through `withContents`) and closes a named file's descriptor. Placing the file
    /// does this first.
    func writeOut() throws(DownloadError) {
        if !writtenOut, heldCount > 0, descriptor >= 0 {
            writeOutError = FileDescriptorIO.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: held![..<heldCount]))
            writtenOut = true
        }
        if path != nil { closeDescriptor() }
        if let code = writeOutError { throw DownloadError.writing("temp file \(displayPath)", code) }
    }

    /// A new temp file in `folder` with this file's complete bytes: an independent copy for
    /// another name of the same body.
    func copy(in folder: TempFileDirectory) throws(DownloadError) -> TempFile {
        if let path, descriptor < 0, heldCount == 0 { return try folder.copy(of: path) }
        let copy = try folder.create()
        if let held, heldCount > 0 {
            if let code = copy.write(UnsafeRawBufferPointer(rebasing: held[..<heldCount])) {
                throw DownloadError.writing("temp file \(copy.displayPath)", code)
            }
        } else {
            try copy.append(contentsOf: descriptor, describedAs: displayPath)
        }
        return copy
    }

    func closeDescriptor() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
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
}
