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
    /// Most bytes libjpeg may hold for a progressive (multi-scan) JPEG, which it decodes into
    /// whole-image coefficient buffers (about 2 bytes per sample). The default admits every image
    /// within the default `maxPixels`; lower it to bound parallel decodes.
    public var maxMemory: Int

    public init(maxPixels: Int = 178_956_970, maxScans: Int = 500, maxWidth: Int = 1_000_000, maxHeight: Int = 1_000_000,
                maxMemory: Int = 2 << 30) {
        self.maxPixels = maxPixels
        self.maxScans = maxScans
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxMemory = maxMemory
    }

    /// No limits at all: for reading headers only, which allocates nothing in proportion to the image.
    static let unlimited = DecodeLimits(maxPixels: 0, maxScans: 0, maxWidth: 0, maxHeight: 0, maxMemory: 0)
}
