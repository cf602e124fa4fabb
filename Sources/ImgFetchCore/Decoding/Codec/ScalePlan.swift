/// How an image gets to its `Resize`: the exact scaled size, the JPEG DCT scaling that does half
/// of a large downscale for little before the box filter finishes it, and the canvas that a crop or a pad
/// cuts or fills around the scaled image.
///
/// The scale is uniform (the aspect ratio is kept, each side rounded to nearest and at least 1
/// pixel), so "shorter" and "longer" side are the same before and after the EXIF orientation;
/// the canvas is laid out in the oriented image.
struct ScalePlan: Equatable {
    /// Size after scaling, in stored orientation.
    var targetWidth: Int
    var targetHeight: Int
    /// libjpeg's scale_num over 8: 4 when the image at half size is still at least twice the
    /// target, so that the box filter after it does the rest of the shrink; else 8. The smaller
    /// scales, 1/8 and 2/8, cost less but alias fine detail (moire, up to 8 dB of PSNR behind
    /// OpenCV's INTER_AREA on the test's sources: BENCHMARKS.md), so only a preview (`fastest`)
    /// takes them: the smallest of 1, 2, 4, 8 not under the target. The odd ones (3/8, 5/8 …) run
    /// scalar C in libjpeg-turbo, and for 4:2:0 JPEGs at twice the size for chroma: center-cropping
    /// 2000 640×480 photos to 256 px decoded at 5/8 cost more CPU than decoding them whole.
    var dctNumerator: Int
    /// The output's size, in shown orientation: the oriented target size, or the crop or the pad around it.
    var canvasWidth: Int
    var canvasHeight: Int

    init(width: Int, height: Int, resize: Resize?, orientation: ExifOrientation = .up, format: ImageFormat,
         fastest: Bool = false) {
        let shorter = min(width, height), longer = max(width, height)
        var targetWidth = width, targetHeight = height
        if let resize {
            // The side that becomes `size`.
            let reference = resize.fit == .keepRatio || resize.fit == .centerCrop ? shorter : longer
            if reference != resize.size && (resize.upscale || reference > resize.size) {
                func scaled(_ side: Int) -> Int {
                    side == reference ? resize.size : max(1, (side * resize.size * 2 + reference) / (reference * 2))
                }
                targetWidth = scaled(width)
                targetHeight = scaled(height)
            }
        }
        var numerator = 8
        if format == .jpeg && targetWidth < width {
            // libjpeg's output size is ceil(side × n / 8).
            func dctSide(_ side: Int, _ n: Int) -> Int { (side * n + 7) / 8 }
            if fastest {
                numerator = [1, 2, 4, 8].first { dctSide(width, $0) >= targetWidth && dctSide(height, $0) >= targetHeight } ?? 8
            } else {
                numerator = dctSide(width, 4) >= 2 * targetWidth && dctSide(height, 4) >= 2 * targetHeight ? 4 : 8
            }
        }
        let shown = orientation.outputSize(width: targetWidth, height: targetHeight)
        var canvas = shown
        switch resize?.fit {
        case .centerCrop?:
            canvas = (min(shown.width, resize!.size), min(shown.height, resize!.size))
        case .pad?:
            canvas = (max(shown.width, resize!.size), max(shown.height, resize!.size))
        case .keepRatio?, .keepRatioLargest?, nil:
            break
        }
        self.init(targetWidth: targetWidth, targetHeight: targetHeight, dctNumerator: numerator,
                  canvasWidth: canvas.width, canvasHeight: canvas.height)
    }

    init(targetWidth: Int, targetHeight: Int, dctNumerator: Int, canvasWidth: Int? = nil, canvasHeight: Int? = nil) {
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.dctNumerator = dctNumerator
        self.canvasWidth = canvasWidth ?? targetWidth
        self.canvasHeight = canvasHeight ?? targetHeight
    }
}
