/// An EXIF orientation: how the stored pixels map onto the upright image.
enum ExifOrientation: Int {
    case up = 1, mirrored = 2, down = 3, downMirrored = 4
    case leftMirrored = 5, right = 6, rightMirrored = 7, left = 8

    /// Orientations 5–8 swap width and height.
    var transposes: Bool { rawValue >= 5 }

    /// Output size for a stored image of `width` × `height`.
    func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
        transposes ? (height, width) : (width, height)
    }

    /// The stored pixel that lands at output (`x`, `y`), for a stored image of `width` × `height`.
    func sourcePixel(x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        switch self {
        case .up: (x, y)
        case .mirrored: (width - 1 - x, y)
        case .down: (width - 1 - x, height - 1 - y)
        case .downMirrored: (x, height - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, height - 1 - x)
        case .rightMirrored: (width - 1 - y, height - 1 - x)
        case .left: (width - 1 - y, x)
        }
    }
}
