import CImageCodec
import Glibc

/// Decodes JPEG and PNG files with libjpeg-turbo and libpng (through CImageCodec): verification,
/// conversion to decompressed pixels, and header probing. Every call is synchronous, streams row
/// by row with bounded memory, and is safe to run on several threads at once on different files.
public enum ImageCodec {
    /// Bytes a conversion may keep in memory for an image it has to hold whole (interlaced PNG,
    /// flipped or rotated output); larger images spill to a scratch file.
    public static let defaultMemoryBudget = 16 << 20

    /// Fully decodes (verifies) the image in the file at `path`: the header within `limits`, every
    /// row and progressive scan, and the trailer. Nothing is written.
    public static func verify(path: String, format: ImageFormat, limits: DecodeLimits = DecodeLimits()) -> Result<ImageInfo, DownloadError> {
        Result { () throws(DownloadError) -> ImageInfo in
            let codecFormat = try ImageDecoder.codecFormat(format)
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw DownloadError(.filesystem, "cannot open \(path): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var cLimits = limits.codecLimits
            var header = imgcodec_header()
            try CodecCall.run { imgcodec_verify(fd, codecFormat, &cLimits, &header, $0, $1) }
            return ImageInfo(header: header, verified: true)
        }
    }

    /// Decodes the image at `path` and writes it to `output` as `pixelFormat`, with the EXIF
    /// orientation applied and, when `maxDimension` is given, downscaled so the longer side is at
    /// most that. `output` is an open descriptor written sequentially from its current offset (the
    /// caller owns it and discards it on failure); scratch files go to `scratchDirectory`.
    public static func convert(path: String, format: ImageFormat, to pixelFormat: PixelFormat, maxDimension: Int? = nil,
                               limits: DecodeLimits = DecodeLimits(), output: Int32, scratchDirectory: String,
                               memoryBudget: Int = defaultMemoryBudget) -> Result<ConvertedImage, DownloadError> {
        Result { () throws(DownloadError) -> ConvertedImage in
            let conversion = ImageConversion(pixelFormat: pixelFormat, maxDimension: maxDimension, output: output,
                                             scratchDirectory: scratchDirectory, memoryBudget: memoryBudget)
            return try conversion.run(decoder: ImageDecoder(path: path, format: format, limits: limits))
        }
    }

    /// Header facts without decoding the pixels (for `--no-decode`); nil when the header cannot be read.
    /// No limits apply: reading a header allocates nothing in proportion to the image.
    public static func probe(path: String, format: ImageFormat) -> ImageInfo? {
        try? ImageDecoder(path: path, format: format, limits: .unlimited).info
    }
}
