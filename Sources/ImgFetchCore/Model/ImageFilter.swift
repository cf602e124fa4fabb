/// Which images a run keeps by their size (`--min-size`, `--max-aspect-ratio`), as img2dataset's
/// `--min_image_size` and `--max_aspect_ratio` filter: the decoder's header is read first, so a
/// filtered image is never decoded. Both are of the stored size; neither changes under an EXIF
/// orientation, which only swaps the sides.
public struct ImageFilter: Sendable, Equatable {
    /// Fewest pixels on the shorter side; 0 keeps every size.
    public var minSide = 0
    /// Largest longer-side-to-shorter-side ratio; nil keeps every shape.
    public var maxAspectRatio: Double?

    public init(minSide: Int = 0, maxAspectRatio: Double? = nil) {
        self.minSide = minSide
        self.maxAspectRatio = maxAspectRatio
    }

    /// Whether the filter keeps every image.
    public var keepsAll: Bool { minSide <= 0 && maxAspectRatio == nil }

    /// Why an image of `width` × `height` is not kept (class `too-small` or `aspect-ratio`); nil when it is.
    public func rejection(width: Int, height: Int) -> DownloadError? {
        let shorter = min(width, height), longer = max(width, height)
        if shorter < minSide {
            return DownloadError(.tooSmall, "\(width)×\(height) image, smaller than --min-size \(minSide) on its shorter side")
        }
        if let maxAspectRatio, shorter == 0 || Double(longer) / Double(shorter) > maxAspectRatio {
            let ratio = shorter == 0 ? "an infinite" : "a " + Self.format(Double(longer) / Double(shorter))
            return DownloadError(.aspectRatio, "\(width)×\(height) image has \(ratio) aspect ratio, over --max-aspect-ratio \(Self.format(maxAspectRatio))")
        }
        return nil
    }

    /// A ratio with at most two decimals: 3, 2.5, 1.33.
    static func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let whole = hundredths / 100, fraction = hundredths % 100
        if fraction == 0 { return String(whole) }
        return fraction % 10 == 0 ? "\(whole).\(fraction / 10)" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
