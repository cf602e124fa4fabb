import Glibc

/// A small preview of a saved image (see `Thumbnailer`).
public struct Thumbnail: Sendable, Equatable {
    /// `DIRECTORY/HASH.jpg`, or `DIRECTORY/HASH.png` for an image with alpha; HASH is the SHA-256
    /// of the image file's bytes.
    public var path: String
    public var width: Int
    public var height: Int
    /// False when the thumbnail was there already (made by an earlier run, or for an identical file).
    public var isNew: Bool

    public init(path: String, width: Int, height: Int, isNew: Bool) {
        self.path = path
        self.width = width
        self.height = height
        self.isNew = isNew
    }
}

/// Makes thumbnails of saved images for `--gallery`: decoded, oriented and box-downscaled to fit
/// `maxDimension` exactly as `--save-as png --max-dimension` does (`ImageConversion`), and written
/// as 8-bit files of the first frame: a JPEG (quality 80), or a PNG when the image has alpha.
/// Each is named by the SHA-256 of the image file's bytes, so a thumbnail that exists is reused
/// rather than made again, and written atomically (a temp file in `directory`, then rename), so
/// a reader never sees half of one.
///
/// Safe to call from several threads at once: large decodes share one `DecodeMemoryBudget`.
public final class Thumbnailer: Sendable {
    public static let defaultMaxDimension = 256

    public let directory: String
    public let maxDimension: Int
    private let limits: DecodeLimits
    private let tempFiles: TempFileDirectory
    private let memory = DecodeMemoryBudget(limit: DecodeStage.defaultDecodeMemory, exempt: DecodeStage.exemptDecodeMemory)

    /// Creates `directory` (and its parent) when missing, and removes temp files that killed runs left there.
    public init(directory: String, maxDimension: Int = defaultMaxDimension, limits: DecodeLimits = DecodeLimits()) throws(DownloadError) {
        self.directory = directory
        self.maxDimension = max(1, maxDimension)
        self.limits = limits
        tempFiles = TempFileDirectory(path: directory)
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw DownloadError(.filesystem, "cannot create \(prefix): \(Errno.describe())")
            }
            prefix += "/"
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw DownloadError(.filesystem, "cannot write to \(directory): \(Errno.describe())")
        }
        TempFile.removeStale(in: directory)
    }

    /// The thumbnail of the image file at `path`, made now or found from an earlier call.
    /// `contentHash` is the file's SHA-256 (hex) when the caller knows it; otherwise the file is
    /// hashed. Fails, touching nothing, for a file that is not an image in a decodable format
    /// (`unverified` for SVG, ICO, JPEG XL, HEIC), or that does not decode within the limits.
    public func thumbnail(of path: String, contentHash: String? = nil) -> Result<Thumbnail, DownloadError> {
        Result { () throws(DownloadError) -> Thumbnail in
            // O_NONBLOCK: a FIFO planted at the path must not hang the open; regular files ignore it.
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { throw DownloadError(.filesystem, "cannot read \(path): \(Errno.describe())") }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw DownloadError(.filesystem, "\(path) is not a regular file")
            }
            let format = try Self.format(of: fd)
            var hash = contentHash.flatMap(Self.validHash) ?? ""
            if hash.isEmpty { hash = try SHA256.hexDigest(ofFile: fd, path: path) }
            if let existing = existing(hash) { return existing }
            // Decoding through the open descriptor reads the very file that was hashed.
            return try make(from: fd, format: format, named: hash)
        }
    }

    /// The thumbnail an earlier call made for `hash`, if its header reads and it fits. An empty
    /// file, which a crash can leave where a rename got to the disk before the data, is made again.
    private func existing(_ hash: String) -> Thumbnail? {
        for format in [ImageFormat.jpeg, .png] {
            let path = OutputPaths.join(directory, hash + "." + format.fileExtension)
            guard let info = ImageCodec.probe(path: path, format: format) else { continue }
            guard max(info.width, info.height) <= maxDimension else { return nil }
            return Thumbnail(path: path, width: info.width, height: info.height, isNew: false)
        }
        return nil
    }

    /// Converts the image into a temp file in `directory`, then renames it to `HASH.jpg` or `HASH.png`.
    private func make(from source: Int32, format: ImageFormat, named hash: String) throws(DownloadError) -> Thumbnail {
        let output = try tempFiles.create()
        var conversion = ImageConversion(pixelFormat: .png, resize: Resize(size: maxDimension), output: output.writeDescriptor,
                                         scratchDirectory: directory, memoryBudget: ImageCodec.defaultPixelMemory)
        conversion.purpose = .preview
        let converted = try ImageCodec.convert(.descriptor(source), format: format, conversion: conversion, limits: limits,
                                               budget: memory).get()
        let written = ImageConversion.previewFormat(channels: converted.channels)
        let target = OutputPaths.join(directory, hash + "." + written.fileExtension)
        _ = try output.commit(to: target, overwrite: true)
        return Thumbnail(path: target, width: converted.width, height: converted.height, isNew: true)
    }

    /// The format from the file's magic bytes; throws for anything without a decoder.
    private static func format(of fd: Int32) throws(DownloadError) -> ImageFormat {
        var head = [UInt8](repeating: 0, count: ImageSniffer.headLength)
        let count = head.withUnsafeMutableBytes { FileDescriptorIO.read(fd, into: $0, at: 0) }
        guard count >= 0 else { throw DownloadError(.filesystem, "cannot read the image: \(Errno.describe())") }
        switch ImageSniffer.sniff(head.prefix(count)) {
        case .notAnImage(let description):
            throw DownloadError(.notAnImage, description)
        case .image(let format) where !format.isDecodable:
            throw DownloadError(.unverified, "no preview: imgfetch cannot decode \(format.displayName)")
        case .image(let format):
            return format
        }
    }

    /// `hash` when it is 64 lowercase hex digits, the only thing ever used as a file name here.
    private static func validHash(_ hash: String) -> String? {
        hash.utf8.count == 64 && hash.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } ? hash : nil
    }
}
