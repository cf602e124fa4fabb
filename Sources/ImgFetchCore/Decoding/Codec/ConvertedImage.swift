/// The outcome of a conversion: the source's facts and the size of the pixels written.
public struct ConvertedImage: Sendable, Equatable {
    /// The source image (verified, since conversion decodes every row).
    public var source: ImageInfo
    /// Width written, after orientation and downscaling.
    public var width: Int
    /// Height written, after orientation and downscaling.
    public var height: Int
    /// Channels written: 3 (RGB) or 4 (RGBA).
    public var channels: Int

    public init(source: ImageInfo, width: Int, height: Int, channels: Int) {
        self.source = source
        self.width = width
        self.height = height
        self.channels = channels
    }
}
