import CImageCodec

/// Bounds on what the codec agrees to decode, all checked from the header before any pixel memory is allocated.
public struct DecodeLimits: Sendable, Equatable {
    /// Largest width × height decoded (`--max-pixels`); the default is libjpeg-turbo's and browsers' usual 0x0AAAAAAA.
    public var maxPixels: Int
    /// Most scans a progressive JPEG may have: each scan is a pass over the whole image, so a
    /// small file with thousands of scans would burn CPU (libjpeg-turbo's TJFLAG_LIMITSCANS uses 500).
    public var maxScans: Int
    /// Widest image accepted; also libpng's user width limit.
    public var maxWidth: Int
    /// Tallest image accepted; also libpng's user height limit.
    public var maxHeight: Int
    /// Most bytes one image's decode may need (`--max-decode-memory`), as its header says before
    /// any pixel memory is allocated (`ImageDecoder.decodeMemory`, `convertMemory`): progressive
    /// JPEG coefficient buffers, animation canvases, whole-image rasters. An image that needs more
    /// fails up front as too large. libjpeg, libtiff and libavif are held to it as well. With the
    /// decode stage's budget for large decodes running together (`DecodeMemoryBudget`), it bounds
    /// what one run's decoding holds. 0: no limit.
    public var maxMemory: Int
    /// Most frames of an animation (GIF, WebP, AVIF) or pages of a TIFF: every one is decoded.
    public var maxFrames: Int
    /// Stops the decodes made with these limits at their next row or scan once cancelled (the
    /// decode stage's, at Ctrl-C); nil: they run to their end.
    public var cancellation: DecodeCancellation?

    /// Most pixels decoded over all frames of an animation: `animationPixelFactor` × `maxPixels`, so
    /// an animation may cost a few times the largest still image, never more.
    public var maxTotalPixels: Int { maxPixels.multipliedReportingOverflow(by: Self.animationPixelFactor).overflow ? 0 : maxPixels * Self.animationPixelFactor }

    public static let animationPixelFactor = 4

    /// 256 MiB: a 100-megapixel progressive JPEG (about 150 MiB of coefficients), a 40-megapixel
    /// animation canvas; the hostile files of a 13000² canvas need 500 MiB to 1.4 GiB and are refused.
    public static let defaultMaxMemory = 256 << 20

    /// The refusal of an image whose decode needs `bytes`, over `maxMemory`; nil when it fits.
    func memoryRefusal(_ bytes: Int) -> DownloadError? {
        guard maxMemory > 0, bytes > maxMemory else { return nil }
        return DownloadError(.tooLarge, "image too large: decoding it needs about \((bytes + (1 << 20) - 1) >> 20) MiB, over "
            + "--max-decode-memory (\(maxMemory >> 20) MiB)")
    }

    public init(maxPixels: Int = 178_956_970, maxScans: Int = 500, maxWidth: Int = 1_000_000, maxHeight: Int = 1_000_000,
                maxMemory: Int = defaultMaxMemory, maxFrames: Int = 10_000) {
        self.maxPixels = maxPixels
        self.maxScans = maxScans
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxMemory = maxMemory
        self.maxFrames = maxFrames
    }

    /// No limits at all: for reading headers only, which allocates nothing in proportion to the image.
    static let unlimited = DecodeLimits(maxPixels: 0, maxScans: 0, maxWidth: 0, maxHeight: 0, maxMemory: 0, maxFrames: 0)
}

/// A switch that stops running decodes at their next row or chunk of input (`IMGCODEC_CANCELLED`,
/// reported as `cancelled`): a progressive JPEG of 100 megapixels otherwise held Ctrl-C for
/// seconds. The flag is written and read with C atomics (`imgcodec_cancel`), hence `@unchecked Sendable`.
public final class DecodeCancellation: @unchecked Sendable, Equatable {
    let flag: UnsafeMutablePointer<Int32>

    public init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit { flag.deallocate() }

    /// Every decode that reads this switch stops; there is no undoing it.
    public func cancel() { imgcodec_cancel(flag) }

    public static func == (left: DecodeCancellation, right: DecodeCancellation) -> Bool { left === right }
}
