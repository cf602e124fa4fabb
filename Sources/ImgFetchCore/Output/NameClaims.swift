import CFileSystem
import Glibc

/// The run's name claims, kept in a file so that a list of any length names its items in
/// constant memory: a hash table of name keys (64-bit) → the identity of the URL that claimed the
/// name, on disk, read and written with `pread`/`pwrite` (the page cache holds it, not the heap).
///
/// Open addressing with linear probing over 16-byte slots (key, owner; key 0 marks an empty slot,
/// so the key 0 itself is kept aside in memory). A key's home slot is the top bits of its hash
/// under the process's random seed (`Hasher`), so no list can be made to pile its names onto one
/// run of slots. Probing never wraps: it runs on past the last home slot into the file's tail,
/// and a slot past the end of the file is empty.
///
/// When three quarters of the home slots are taken, the table doubles. With home slots taken from
/// the top bits, an entry's new home is 2h or 2h + 1 for its old home h, so the new table is
/// written front to back in one pass over the old one: each cluster (a run of taken slots) is
/// sorted by new home, and each entry goes to its home or the first slot after the one written
/// before it. That keeps the probing invariant (every slot from an entry's home to the entry is
/// taken) without a random write.
///
/// The file is unnamed (`O_TMPFILE`) where the file system allows, else named and unlinked at
/// once: it vanishes with the process. About 16 bytes / 0.56 = 29 bytes on disk per distinct name.
/// Used by one thread at a time (`FileNamer`, under `ImageDownloader`'s `Mutex`).
final class NameClaims {
    /// What `claim` found.
    enum Claim: Equatable {
        /// The key was free and is now `owner`'s, or was `owner`'s already.
        case claimed
        /// Another owner holds the key; nothing was written.
        case heldBy(Int64)
    }

    private let directory: String
    private var descriptor: Int32
    /// log2 of the number of home slots.
    private var bits: Int
    private var count = 0
    /// The owner of the key 0, which cannot be stored (0 marks an empty slot).
    private var zeroKeyOwner: Int64?
    /// Where a probe reads: `window` slots at a time, as (key, owner) pairs.
    private var buffer: [UInt64]
    private let seed: Int
    /// A key's hash before its top bits are taken (tests give one that crowds homes together).
    private let hash: (UInt64, Int) -> UInt64
    /// Slots per read and write while the table doubles.
    private let copyChunk: Int
    /// A doubling that failed (a full disk) is tried again only once this many keys are claimed:
    /// the table stays valid over three quarters full, only slower, and a retry per new name
    /// would copy the whole table each time.
    private var nextGrowth = 0

    static let slotBytes = 16
    /// Slots read per `pread` while probing: at three quarters full, an absent key's probe ends
    /// within 8.5 slots on average, so one read almost always settles it.
    static let window = 32
    /// Slots per read and write while the table doubles.
    static let defaultCopyChunk = 8192

    /// `hash` replaces the seeded hash (tests), `copyChunk` the slots copied at a time.
    init(directory: String, initialBits: Int = 16, copyChunk: Int = defaultCopyChunk,
         hash: ((UInt64, Int) -> UInt64)? = nil) throws(DownloadError) {
        self.directory = directory
        bits = initialBits
        self.copyChunk = copyChunk
        buffer = [UInt64](repeating: 0, count: 2 * Self.window)
        var generator = SystemRandomNumberGenerator()
        seed = Int.random(in: Int.min...Int.max, using: &generator)
        self.hash = hash ?? { key, seed in
            var hasher = Hasher()
            hasher.combine(seed)
            hasher.combine(key)
            return UInt64(UInt(bitPattern: hasher.finalize()))
        }
        descriptor = try Self.createFile(in: directory)
    }

    deinit { close(descriptor) }

    /// The number of keys claimed (for tests).
    var claimedCount: Int { count + (zeroKeyOwner == nil ? 0 : 1) }

    /// The owner of `key`, or nil when it is free.
    func owner(of key: UInt64) throws(DownloadError) -> Int64? {
        if key == 0 { return zeroKeyOwner }
        return try probe(key).owner
    }

    /// Claims `key` for `owner` unless another owner holds it.
    func claim(_ key: UInt64, for owner: Int64) throws(DownloadError) -> Claim {
        if key == 0 {
            if let held = zeroKeyOwner, held != owner { return .heldBy(held) }
            zeroKeyOwner = owner
            return .claimed
        }
        let (slot, held) = try probe(key)
        if let held { return held == owner ? .claimed : .heldBy(held) }
        try write([key, UInt64(bitPattern: owner)], atSlot: slot)
        count += 1
        growIfFull()
        return .claimed
    }

    /// Gives `key` to `owner`, whoever held it.
    func assign(_ key: UInt64, to owner: Int64) throws(DownloadError) {
        if key == 0 { return zeroKeyOwner = owner }
        let (slot, held) = try probe(key)
        if held == owner { return }
        try write([key, UInt64(bitPattern: owner)], atSlot: slot)
        if held == nil {
            count += 1
            growIfFull()
        }
    }

    // MARK: - Internals

    private func home(_ key: UInt64, bits: Int) -> Int {
        Int(hash(key, seed) >> UInt64(64 - bits))
    }

    /// Doubles the table past three quarters full. A doubling that fails (its new file found no
    /// room) leaves the table as it was, still valid; it is tried again after another eighth of
    /// the table's slots have been claimed. The claim itself has been written either way.
    private func growIfFull() {
        guard count > (3 << bits) / 4, count >= nextGrowth else { return }
        do {
            try grow()
        } catch {
            nextGrowth = count + (1 << bits) / 8
        }
    }

    /// The slot holding `key` and its owner, or the first empty slot from its home on.
    private func probe(_ key: UInt64) throws(DownloadError) -> (slot: Int, owner: Int64?) {
        var start = home(key, bits: bits)
        while true {
            try readWindow(at: start)
            for index in 0..<Self.window {
                let slotKey = buffer[2 * index]
                if slotKey == key { return (start + index, Int64(bitPattern: buffer[2 * index + 1])) }
                if slotKey == 0 { return (start + index, nil) }
            }
            start += Self.window
        }
    }

    /// Fills `buffer` with the slots from `slot` on; slots past the end of the file read as empty.
    private func readWindow(at slot: Int) throws(DownloadError) {
        let bytes = Self.window * Self.slotBytes
        let count = buffer.withUnsafeMutableBytes { FileDescriptorIO.read(descriptor, into: $0, at: slot * Self.slotBytes) }
        guard count >= 0 else { throw readFailure() }
        if count < bytes {
            buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress! + count, 0, bytes - count) }
        }
    }

    private func write(_ words: [UInt64], atSlot slot: Int) throws(DownloadError) {
        let code = words.withUnsafeBytes { FileDescriptorIO.writeAll(descriptor, $0, at: slot * Self.slotBytes) }
        if let code { throw Self.writeFailure(code) }
    }

    /// Doubles the table: one pass over the old file, one front-to-back write of the new one.
    private func grow() throws(DownloadError) {
        let newBits = bits + 1
        let target = try Self.createFile(in: directory)
        var writer = SlotWriter(descriptor: target, chunkSlots: copyChunk)
        var cluster: [(home: Int, key: UInt64, owner: UInt64)] = []
        func flushCluster() throws(DownloadError) {
            cluster.sort { $0.home < $1.home }
            for entry in cluster { try writer.put(key: entry.key, owner: entry.owner, home: entry.home) }
            cluster.removeAll(keepingCapacity: true)
        }
        var chunk = [UInt64](repeating: 0, count: 2 * copyChunk)
        var offset = 0
        while true {
            let read = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(descriptor, into: $0, at: offset) }
            guard read >= 0 else {
                close(target)
                throw readFailure()
            }
            // The file is written in whole slots, so a read ends on a slot's edge but at the end.
            let slots = read / Self.slotBytes
            if slots == 0 { break }
            for index in 0..<slots {
                let key = chunk[2 * index]
                if key == 0 {
                    do { try flushCluster() } catch { close(target); throw error }
                } else {
                    cluster.append((home(key, bits: newBits), key, chunk[2 * index + 1]))
                }
            }
            offset += slots * Self.slotBytes
        }
        do {
            try flushCluster()
            try writer.finish()
        } catch {
            close(target)
            throw error
        }
        close(descriptor)
        descriptor = target
        bits = newBits
    }

    /// Writes slots front to back, a chunk at a time; chunks with nothing in them are left as holes.
    private struct SlotWriter {
        let descriptor: Int32
        let chunkSlots: Int
        var chunk: [UInt64]
        var chunkStart = 0
        var dirty = false
        /// The slot after the last one written.
        var next = 0

        init(descriptor: Int32, chunkSlots: Int) {
            self.descriptor = descriptor
            self.chunkSlots = chunkSlots
            chunk = [UInt64](repeating: 0, count: 2 * chunkSlots)
        }

        mutating func put(key: UInt64, owner: UInt64, home: Int) throws(DownloadError) {
            let slot = max(home, next)
            if slot >= chunkStart + chunkSlots {
                try flush()
                chunkStart = slot - slot % chunkSlots
            }
            chunk[2 * (slot - chunkStart)] = key
            chunk[2 * (slot - chunkStart) + 1] = owner
            dirty = true
            next = slot + 1
        }

        mutating func finish() throws(DownloadError) { try flush() }

        private mutating func flush() throws(DownloadError) {
            guard dirty else { return }
            let code = chunk.withUnsafeBytes { FileDescriptorIO.writeAll(descriptor, $0, at: chunkStart * NameClaims.slotBytes) }
            if let code { throw NameClaims.writeFailure(code) }
            for index in chunk.indices { chunk[index] = 0 }
            dirty = false
        }
    }

    private func readFailure() -> DownloadError {
        DownloadError(.filesystem, "cannot read the name claims in \(directory): \(Errno.describe())")
    }

    fileprivate static func writeFailure(_ code: Int32) -> DownloadError {
        DownloadError.writing("the run's name claims", code)
    }

    /// An unnamed file in `directory`, or a named one unlinked at once.
    private static func createFile(in directory: String) throws(DownloadError) -> Int32 {
        var fd = CFileSystem_openUnnamed(directory, O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        guard TempFileDirectory.lacksUnnamedFiles(errno) else { throw cannotCreate(in: directory) }
        var template = Array((directory + "/.imgfetch-claims-XXXXXX").utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw cannotCreate(in: directory) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    private static func cannotCreate(in directory: String) -> DownloadError {
        DownloadError.writing("the run's name claims in \(directory)", errno)
    }
}
