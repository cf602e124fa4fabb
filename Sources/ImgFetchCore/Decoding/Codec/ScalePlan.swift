/// How an image gets to `--max-dimension`: the exact target size, and the JPEG DCT scaling that does
/// most of the work for free before the box filter finishes it.
struct ScalePlan: Equatable {
    /// Size after downscaling, in stored orientation: the longer side is at most the maximum,
    /// the aspect ratio is kept (rounded to nearest) and no side is below 1 pixel.
    var targetWidth: Int
    var targetHeight: Int
    /// libjpeg's scale_num over 8: the smallest DCT scaling that still yields at least the target size.
    var dctNumerator: Int

    init(width: Int, height: Int, maxDimension: Int?, format: ImageFormat) {
        let longer = max(width, height)
        guard let maxDimension, longer > max(1, maxDimension) else {
            self.init(targetWidth: width, targetHeight: height, dctNumerator: 8)
            return
        }
        let limit = max(1, maxDimension)
        func scaled(_ side: Int) -> Int {
            side == longer ? limit : max(1, (side * limit * 2 + longer) / (longer * 2))
        }
        let targetWidth = scaled(width), targetHeight = scaled(height)
        var numerator = 8
        if format == .jpeg {
            // libjpeg's output size is ceil(side × n / 8); take the smallest n that does not undershoot.
            func dctSide(_ side: Int, _ n: Int) -> Int { (side * n + 7) / 8 }
            numerator = (1...8).first { dctSide(width, $0) >= targetWidth && dctSide(height, $0) >= targetHeight } ?? 8
        }
        self.init(targetWidth: targetWidth, targetHeight: targetHeight, dctNumerator: numerator)
    }

    init(targetWidth: Int, targetHeight: Int, dctNumerator: Int) {
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.dctNumerator = dctNumerator
    }
}
