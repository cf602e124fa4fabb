/// Where an attempt's 2xx body goes as it arrives: a temp file made at the first byte, the head
/// kept for sniffing, and the digests asked for (SHA-256, and MD5 or SHA-512 for a dataset's
/// `--hash` and `--verify-hash`). Engine thread only.
struct BodySink {
    /// Where the temp file is made (the output directory); nil for a store exchange, whose body
    /// the transfer keeps in memory instead.
    let directory: TempFileDirectory?
    let maxSize: Int64
    /// The run's budget for bodies held in memory; set by the engine.
    var heldBodyBudget: HeldBodyBudget?
    /// The body's temp file, from the first byte on.
    var tempFile: TempFile?
    private(set) var bytes: Int64 = 0
    private(set) var head: [UInt8] = []
    private var discardedBytes = 0
    private let hashers: [DigestHasher]

    /// Largest error or redirect body read (and thrown away) before the connection is dropped instead.
    static let maxDiscardedBytes = 1 << 20

    init(directory: TempFileDirectory?, maxSize: Int64, digests: [DigestAlgorithm]) {
        self.directory = directory
        self.maxSize = maxSize
        hashers = digests.map { DigestHasher($0) }
    }

    /// Empties the sink for another attempt, keeping its temp file.
    mutating func reset() {
        // A first attempt's file is already empty: no truncate (two syscalls per URL) needed.
        if bytes > 0 {
            tempFile?.truncate()
            for hasher in hashers { hasher.reset() }
        }
        bytes = 0
        head.removeAll(keepingCapacity: true)
        discardedBytes = 0
    }

    /// Readies the sink for an attempt that continues the body where it was cut off (a `Range`
    /// request): the bytes, head, digests and temp file stay.
    mutating func keepForResume() {
        discardedBytes = 0
    }

    /// Appends a chunk of a 2xx body.
    mutating func write(_ chunk: UnsafeRawBufferPointer) throws(DownloadError) {
        guard bytes + Int64(chunk.count) <= maxSize else {
            throw DownloadError(.tooLarge, "body exceeds --max-size (\(maxSize) bytes)")
        }
        let file = try openTempFile()
        if let code = file.write(chunk) {
            throw DownloadError.writing("temp file \(file.displayPath)", code)
        }
        for hasher in hashers { hasher.update(chunk) }
        if head.count < ImageSniffer.headLength {
            head.append(contentsOf: chunk.prefix(ImageSniffer.headLength - head.count))
        }
        bytes += Int64(chunk.count)
    }

    /// Counts a chunk of an error or redirect body, which is read and dropped so that the
    /// connection can be reused; false once there is too much of it.
    mutating func discard(_ count: Int) -> Bool {
        discardedBytes += count
        return discardedBytes <= Self.maxDiscardedBytes
    }

    /// The complete body; the sink gives up its temp file.
    mutating func finish() throws(DownloadError) -> ReceivedBody {
        // An empty body never reached `write`, which creates the file.
        let file = try openTempFile()
        file.finishWriting()
        tempFile = nil
        var digests: [DigestAlgorithm: String] = [:]
        for hasher in hashers { digests[hasher.algorithm] = hasher.finish() }
        return ReceivedBody(tempFile: file, bytes: bytes, head: head, digests: digests)
    }

    /// The body's temp file, created on first use: a 304, an error status or a failed connection
    /// never costs a file (on ext4, creating and removing one is the dearest step).
    private mutating func openTempFile() throws(DownloadError) -> TempFile {
        if let tempFile { return tempFile }
        guard let directory else { throw DownloadError(.filesystem, "no directory for the body") }
        let created = try directory.create(budget: heldBodyBudget)
        tempFile = created
        return created
    }
}
