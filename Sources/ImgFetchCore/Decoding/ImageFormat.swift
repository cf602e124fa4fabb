/// An image file format recognized by its magic bytes.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp, bmp, tiff, avif, heic, jxl, ico, svg

    /// The name users know the format by, for messages.
    public var displayName: String {
        switch self {
        case .webp: "WebP"
        case .jxl: "JPEG XL"
        default: rawValue.uppercased()
        }
    }

    /// Whether imgfetch decodes (and so verifies) this format; the others are saved unverified.
    public var isDecodable: Bool {
        switch self {
        case .jpeg, .png, .gif, .webp, .bmp, .tiff, .avif: true
        case .heic, .jxl, .ico, .svg: false
        }
    }

    /// The extension a file of this format is saved with.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        default: rawValue
        }
    }

    /// Every extension that already names this format correctly (lowercase, without the dot).
    public var acceptedExtensions: Set<String> {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe", "jfif"]
        case .tiff: ["tif", "tiff"]
        case .heic: ["heic", "heif"]
        case .ico: ["ico", "cur"]
        default: [rawValue]
        }
    }

    /// Extensions of any image format: a name ending in one of these gets it replaced, not kept beside the right one.
    public static let allImageExtensions: Set<String> = allCases.reduce(into: []) { $0.formUnion($1.acceptedExtensions) }
}
