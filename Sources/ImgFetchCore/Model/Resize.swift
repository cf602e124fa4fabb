/// How decompressed outputs are sized (`--resize N --fit MODE`, `--max-dimension N`), with
/// img2dataset's meanings of the modes. The EXIF orientation is applied first, so "shorter" and
/// "longer" are those of the image as it is shown.
public struct Resize: Sendable, Equatable {
    public enum Fit: String, Sendable, CaseIterable {
        /// The shorter side becomes `size`; the aspect ratio is kept.
        case keepRatio = "keep-ratio"
        /// The longer side becomes `size`; the aspect ratio is kept (`--max-dimension`).
        case keepRatioLargest = "keep-ratio-largest"
        /// A `size` × `size` crop from the middle of the keep-ratio image.
        case centerCrop = "center-crop"
        /// `size` × `size`: the keep-ratio-largest image in the middle, the rest `padColor`.
        case pad
    }

    /// An RGB color of 8-bit samples.
    public struct Color: Sendable, Equatable {
        public var red: UInt8
        public var green: UInt8
        public var blue: UInt8

        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        public static let black = Color(red: 0, green: 0, blue: 0)
        public static let white = Color(red: 255, green: 255, blue: 255)

        /// `RRGGBB` in lowercase hex.
        public var hex: String {
            [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }

        /// The gray level of this color for a gray image (Rec. 601 luma, rounded).
        public var luma: UInt8 {
            let weighted: Int = 299 * Int(red) + 587 * Int(green) + 114 * Int(blue)
            return UInt8((weighted + 500) / 1000)
        }
    }

    /// The side, in pixels, that `fit` aims for (at least 1).
    public var size: Int
    public var fit: Fit
    /// Enlarge images smaller than `size` (`--upscale`); otherwise they keep their size, and only
    /// `pad` still makes a `size` × `size` output.
    public var upscale: Bool
    /// What `pad` fills with (`--background`, white by default, as behind transparent pixels).
    public var padColor: Color

    public init(size: Int, fit: Fit = .keepRatioLargest, upscale: Bool = false, padColor: Color = .white) {
        self.size = max(1, size)
        self.fit = fit
        self.upscale = upscale
        self.padColor = padColor
    }

    /// What the output kind of the cache index adds for this resize: `:256` for `--max-dimension
    /// 256` (as before `--fit` existed), the mode and options otherwise.
    var outputKindSuffix: String {
        var suffix = ":\(size)"
        if fit != .keepRatioLargest { suffix += ":" + fit.rawValue }
        if upscale { suffix += ":upscale" }
        // Black was the only fill before --background: its outputs keep their kind.
        if fit == .pad && padColor != .black { suffix += ":" + padColor.hex }
        return suffix
    }
}
