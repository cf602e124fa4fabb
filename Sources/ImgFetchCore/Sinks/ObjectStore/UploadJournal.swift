import Glibc

/// The multipart uploads a work directory has in progress, one small file each in
/// `WORKDIR/.imgfetch/multipart/`: written once the store has given the upload its ID, removed
/// once the upload is completed or aborted. A run killed in between (`kill -9`, a lost node, a
/// power cut) leaves its file, so the next run on that work directory knows the upload is its own
/// and aborts it (`ObjectStoreOutput.abortEarlierUploads`) rather than leaving its parts to be
/// billed. Each file holds the bucket, the upload ID and the key, one per line (the key last: it
/// may hold a line break); its name is the SHA-256 of the upload ID. The process making the
/// upload holds an exclusive `flock` on its note until the upload is over, so another run on the
/// same work directory (a second process, or an orphaned worker that still runs) never takes a
/// live upload for a dead one (`claim`). Every operation is best effort: a journal that cannot be
/// written costs only the clean-up, never the upload.
public struct UploadJournal: Sendable {
    /// The note of an upload in progress, locked by this process until `remove` (or until the
    /// process ends: a note kept after a failed abort is a later run's to claim).
    public final class Note: Sendable {
        let path: String
        let descriptor: Int32

        init(path: String, descriptor: Int32) {
            self.path = path
            self.descriptor = descriptor
        }

        /// The upload is over: the note goes.
        public func remove() {
            unlink(path)
        }

        deinit {
            close(descriptor)
        }
    }

    public struct Entry: Sendable, Equatable {
        public let bucket: String
        public let key: String
        public let uploadID: String

        public init(bucket: String, key: String, uploadID: String) {
            self.bucket = bucket
            self.key = key
            self.uploadID = uploadID
        }
    }

    /// The journal's folder, and the one it is in.
    public let directory: String
    private let parent: String

    /// The journal of `workDirectory`.
    public init(workDirectory: String) {
        parent = OutputPaths.join(workDirectory, ".imgfetch")
        directory = OutputPaths.join(parent, "multipart")
    }

    /// Notes that `entry`'s upload is in progress, and locks the note for this process; nil when
    /// it cannot be written. Written and synced under a temp name, then renamed: a note is whole
    /// or absent, also after a power cut.
    public func record(_ entry: Entry) -> Note? {
        _ = mkdir(parent, 0o755)
        _ = mkdir(directory, 0o755)
        let path = self.path(entry.uploadID)
        let temp = path + ".tmp"
        let fd = open(temp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return nil }
        let text = Array((entry.bucket + "\n" + entry.uploadID + "\n" + entry.key).utf8)
        guard flock(fd, LOCK_EX) == 0, text.withUnsafeBytes({ FileDescriptorIO.writeAll(fd, $0) }) == nil, fsync(fd) == 0,
              rename(temp, path) == 0 else {
            unlink(temp)
            close(fd)
            return nil
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
        return Note(path: path, descriptor: fd)
    }

    /// Takes the note of `uploadID` for this process when no live process holds it (its upload is
    /// an earlier run's, left unfinished); nil while another process still makes that upload.
    public func claim(uploadID: String) -> Note? {
        let fd = open(path(uploadID), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return Note(path: path(uploadID), descriptor: fd)
    }

    /// The uploads noted as in progress (in no particular order); files that are not entries are passed over.
    public func entries() -> [Entry] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let item = readdir(folder) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.utf8.count == 64, name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
                names.append(name)
            }
        }
        return names.compactMap { name in
            guard case .success(let bytes)? = FileDescriptorIO.readSmallFile(OutputPaths.join(directory, name), limit: 8 << 10) else {
                return nil
            }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
            guard lines.count == 3, !lines[0].isEmpty, !lines[1].isEmpty, !lines[2].isEmpty else { return nil }
            let entry = Entry(bucket: String(decoding: lines[0], as: UTF8.self), key: String(decoding: lines[2], as: UTF8.self),
                              uploadID: String(decoding: lines[1], as: UTF8.self))
            return SHA256.hexDigest(entry.uploadID) == name ? entry : nil
        }
    }

    private func path(_ uploadID: String) -> String {
        OutputPaths.join(directory, SHA256.hexDigest(uploadID))
    }
}
