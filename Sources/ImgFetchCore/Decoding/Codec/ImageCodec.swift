import CImageCodec
import Glibc

/// Decodes JPEG, PNG, WebP, GIF, AVIF, TIFF and BMP files (through CImageCodec: libjpeg-turbo,
/// libpng, libwebp, giflib, libavif, libtiff and a decoder of its own for BMP): verification,
/// conversion to decompressed pixels, and header probing. Every call is synchronous, streams row
/// by row with bounded memory, and is safe to run on several threads at once on different files.
public enum ImageCodec {
    /// Bytes a conversion may keep in memory for an image it has to hold whole (interlaced PNG,
    /// flipped or rotated output); larger images spill to a scratch file.
    public static let defaultPixelMemory = 16 << 20

    /// Fully decodes (verifies) the image in the file at `path`: the header within `limits`, every
    /// row and progressive scan, and the trailer. Nothing is written.
    public static func verify(path: String, format: ImageFormat, limits: DecodeLimits = DecodeLimits()) -> Result<ImageInfo, DownloadError> {
        verify(.file(path: path), format: format, limits: limits)
    }

    /// Verifies the image in `source`; the decode waits for room in `budget` (if given) once the
    /// header has said how much memory it needs.
    static func verify(_ source: ImageSource, format: ImageFormat, limits: DecodeLimits,
                       budget: DecodeMemoryBudget? = nil) -> Result<ImageInfo, DownloadError> {
        Result { () throws(DownloadError) -> ImageInfo in
            let decoder = try ImageDecoder(source: source, format: format, limits: limits)
            if let refusal = limits.memoryRefusal(decoder.decodeMemory) { throw refusal }
            if let budget {
                try budget.withReservation(decoder.decodeMemory) { () throws(DownloadError) in try decoder.verifyAll() }
            } else {
                try decoder.verifyAll()
            }
            var info = decoder.info
            info.verified = true
            return info
        }
    }

    /// Decodes the image at `path` and writes it to `output` as `pixelFormat`, with the EXIF
    /// orientation applied and sized by `resize` when given. `output` is an open descriptor written sequentially from its current offset (the
    /// caller owns it and discards it on failure); scratch files go to `scratchDirectory`.
    public static func convert(path: String, format: ImageFormat, to pixelFormat: PixelFormat, resize: Resize? = nil,
                               limits: DecodeLimits = DecodeLimits(), output: Int32, scratchDirectory: String,
                               memoryBudget: Int = defaultPixelMemory,
                               background: Resize.Color = .white) -> Result<ConvertedImage, DownloadError> {
        let conversion = ImageConversion(pixelFormat: pixelFormat, resize: resize, output: output,
                                         scratchDirectory: scratchDirectory, memoryBudget: memoryBudget, background: background)
        return convert(.file(path: path), format: format, conversion: conversion, limits: limits)
    }

    /// Runs `conversion` on the image in `source`, once `budget` (if given) has room for the decoder
    /// and whatever the conversion holds.
    static func convert(_ source: ImageSource, format: ImageFormat, conversion: ImageConversion, limits: DecodeLimits,
                        budget: DecodeMemoryBudget? = nil) -> Result<ConvertedImage, DownloadError> {
        Result { () throws(DownloadError) -> ConvertedImage in
            let decoder = try ImageDecoder(source: source, format: format, limits: limits)
            // The decode's own need is what the limit refuses; the output's encoder (a WebP of the
            // whole picture) waits in the budget with it but is not counted against the limit.
            if let refusal = limits.memoryRefusal(decoder.convertMemory) { throw refusal }
            let bytes = decoder.convertMemory + conversion.heldMemory(for: decoder)
            guard let budget else { return try conversion.run(decoder: decoder) }
            return try budget.withReservation(bytes) { () throws(DownloadError) in try conversion.run(decoder: decoder) }
        }
    }

    /// Header facts without decoding the pixels (for `--no-decode`); nil when the header cannot be read.
    /// No limits apply: reading a header allocates nothing in proportion to the image.
    public static func probe(path: String, format: ImageFormat) -> ImageInfo? {
        probe(.file(path: path), format: format)
    }

    static func probe(_ source: ImageSource, format: ImageFormat) -> ImageInfo? {
        try? ImageDecoder(source: source, format: format, limits: .unlimited).info
    }
}
