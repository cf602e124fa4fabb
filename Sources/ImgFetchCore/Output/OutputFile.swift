import Glibc

/// An output handed over rather than placed (`DownloaderConfiguration.outputs` `.handedOver`): the
/// checked body, or its decompressed pixels, in a temp file of the output directory (or still in
/// memory, for a small body). Its bytes stay readable until the last reference goes, and then the
/// temp file goes with it; nothing ever appears under a final name.
///
/// Every caller of one transfer gets the same object. Reading it is safe from any thread: the
/// bytes no longer change, and reads never move a shared file offset.
public final class OutputFile: Sendable {
    private let file: TempFile
    /// The number of bytes.
    public let size: Int

    /// Takes a complete temp file. Throws when its size cannot be read.
    init(_ file: TempFile) throws(DownloadError) {
        self.file = file
        size = try file.withContents { source in
            Result { () throws(DownloadError) -> Int in
                switch source {
                case .memory(let bytes): return bytes.count
                case .descriptor(let fd): return try Self.size(of: fd, file.displayPath)
                case .file(let path): return try Self.withOpened(path) { fd throws(DownloadError) in try Self.size(of: fd, path) }
                }
            }
        }.get()
    }

    /// Writes every byte to `destination` at its current offset. `destinationName` names it in
    /// errors; a write error's message is the OS's (`No space left on device`).
    public func write(to destination: Int32, destinationName: String) throws(DownloadError) {
        try file.withContents { source in
            Result { () throws(DownloadError) in
                switch source {
                case .memory(let bytes):
                    if let code = FileDescriptorIO.writeAll(destination, bytes) {
                        throw DownloadError.writing(destinationName, code)
                    }
                case .descriptor(let fd):
                    try Self.copy(fd, file.displayPath, to: destination, destinationName)
                case .file(let path):
                    try Self.withOpened(path) { fd throws(DownloadError) in try Self.copy(fd, path, to: destination, destinationName) }
                }
            }
        }.get()
    }

    private static func withOpened<T>(_ path: String, _ body: (Int32) throws(DownloadError) -> T) throws(DownloadError) -> T {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DownloadError(.filesystem, "cannot open \(path): \(Errno.describe())") }
        defer { close(fd) }
        return try body(fd)
    }

    private static func size(of fd: Int32, _ path: String) throws(DownloadError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
        return Int(info.st_size)
    }

    /// Copies `input` from its start (by offset, leaving its file offset alone) to `output`.
    private static func copy(_ input: Int32, _ inputName: String, to output: Int32, _ outputName: String) throws(DownloadError) {
        var writeError: Int32?
        let readError = FileDescriptorIO.forEachChunk(of: input, chunkSize: 64 << 10) { chunk in
            writeError = FileDescriptorIO.writeAll(output, chunk)
            return writeError == nil
        }
        if let code = writeError { throw DownloadError.writing(outputName, code) }
        if let code = readError { throw DownloadError(.filesystem, "cannot read \(inputName): \(Errno.describe(code))") }
    }
}
