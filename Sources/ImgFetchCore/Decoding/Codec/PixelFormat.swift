/// A decompressed output format for `--save-as`.
public enum PixelFormat: String, Sendable, CaseIterable {
    /// 8-bit RGB, or RGBA when the source has alpha; lossless.
    case png
    /// Netpbm P6: 8-bit RGB (alpha is dropped).
    case ppm
    /// Netpbm P7: 8-bit RGB, or RGB_ALPHA when the source has alpha.
    case pam
    /// Baseline JPEG (libjpeg-turbo): 8-bit gray or RGB, alpha composited onto a background (white by default); lossy, at
    /// `DownloaderConfiguration.quality`.
    case jpeg
    /// Lossy WebP (libwebp): 8-bit RGB, or RGBA when the source has alpha; at
    /// `DownloaderConfiguration.quality`.
    case webp

    /// The extension a file of this format is saved with.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The formats that keep every decoded sample (all but JPEG and WebP).
    public static let lossless: [PixelFormat] = [.png, .ppm, .pam]

    /// The quality a lossy format is written at when none is given.
    public var defaultQuality: Int? {
        switch self {
        case .jpeg: 95
        case .webp: 90
        case .png, .ppm, .pam: nil
        }
    }
}
