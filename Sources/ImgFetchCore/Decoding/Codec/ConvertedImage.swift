/// The outcome of a conversion: the source's facts and the size of the pixels written.
public struct ConvertedImage: Sendable, Equatable {
    /// The source image (verified, since conversion decodes every row), with its output size set.
    public var source: ImageInfo
    /// Width written, after orientation and downscaling.
    public var width: Int
    /// Height written, after orientation and downscaling.
    public var height: Int
    /// Channels written: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (PPM: always 3).
    public var channels: Int
    /// Bits per sample written: 8 or 16.
    public var bitDepth: Int

    public init(source: ImageInfo, width: Int, height: Int, channels: Int, bitDepth: Int) {
        self.source = source
        self.width = width
        self.height = height
        self.channels = channels
        self.bitDepth = bitDepth
    }
}
