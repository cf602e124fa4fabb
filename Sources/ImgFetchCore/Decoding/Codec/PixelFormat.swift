/// A decompressed output format for `--save-as`.
public enum PixelFormat: String, Sendable, CaseIterable {
    /// 8-bit RGB, or RGBA when the source has alpha; lossless.
    case png
    /// Netpbm P6: 8-bit RGB (alpha is dropped).
    case ppm
    /// Netpbm P7: 8-bit RGB, or RGB_ALPHA when the source has alpha.
    case pam

    /// The extension a file of this format is saved with.
    public var fileExtension: String { rawValue }
}
