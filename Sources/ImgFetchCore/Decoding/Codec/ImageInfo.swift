/// What an image's header says about the stored image, whether the whole image (every frame) was
/// decoded, and the size of the pixels written for it, if any.
public struct ImageInfo: Sendable, Equatable {
    /// Width as stored, before EXIF orientation.
    public var width: Int
    /// Height as stored, before EXIF orientation.
    public var height: Int
    /// Stored channels: 1 gray, 2 gray + alpha, 3 color, 4 RGBA or CMYK. Palette images count 3, and
    /// a PNG tRNS chunk adds one (it becomes an alpha channel when decoded).
    public var channels: Int
    /// Bits per stored sample (per index for palette PNGs).
    public var bitDepth: Int
    /// EXIF orientation 1...8 (1 when the file has none).
    public var orientation: Int
    /// True when every row (every progressive scan, every frame) was decoded without error.
    public var verified: Bool
    /// Width and height of the pixels written (`--save-as png|ppm|pam|jpeg`: after orientation and
    /// downscaling); nil when the original bytes were saved.
    public var outputWidth: Int?
    public var outputHeight: Int?

    public init(width: Int, height: Int, channels: Int, bitDepth: Int, orientation: Int = 1, verified: Bool) {
        self.width = width
        self.height = height
        self.channels = channels
        self.bitDepth = bitDepth
        self.orientation = orientation
        self.verified = verified
    }

    /// Width and height once the EXIF orientation is applied (swapped for orientations 5–8).
    public var displaySize: (width: Int, height: Int) {
        (5...8).contains(orientation) ? (height, width) : (width, height)
    }
}
