import XCTest
@testable import ImgFetchCore

/// `--resize N --fit MODE` and `--upscale`: every mode checked by its pixel dimensions and by
/// where a known test pattern lands, with and without EXIF orientation.
final class ResizeTests: CodecTestCase {
    static let red = [255, 0, 0], green = [0, 255, 0], blue = [0, 0, 255]

    /// 60 × 40 RGB in three vertical bands, 20 columns each: red, green, blue.
    private func bands(width: Int = 60, height: Int = 40) throws -> [UInt8] {
        var rows: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width {
                rows += (x * 3 < width ? Self.red : x * 3 < 2 * width ? Self.green : Self.blue).map { UInt8($0) }
            }
        }
        return try Fixtures.png(rows, width: width, height: height, options: Fixtures.pngOptions(colorType: 2, bitDepth: 8))
    }

    private func resized(_ bytes: [UInt8], _ size: Int, _ fit: Resize.Fit, upscale: Bool = false,
                         padColor: Resize.Color = .black, to format: PixelFormat = .png) throws -> Image {
        let (converted, image) = try convertedImage(bytes, .png, to: format,
                                                    resize: Resize(size: size, fit: fit, upscale: upscale, padColor: padColor))
        XCTAssertEqual([converted.width, converted.height], [image.width, image.height])
        return image
    }

    func testKeepRatioMakesTheShorterSideN() throws {
        let image = try resized(try bands(), 20, .keepRatio)
        XCTAssertEqual([image.width, image.height], [30, 20])
        XCTAssertEqual(image.pixel(2, 10), Self.red)
        XCTAssertEqual(image.pixel(15, 10), Self.green)
        XCTAssertEqual(image.pixel(27, 10), Self.blue)
    }

    func testKeepRatioLargestMakesTheLongerSideNAsMaxDimensionDoes() throws {
        let image = try resized(try bands(), 30, .keepRatioLargest)
        XCTAssertEqual([image.width, image.height], [30, 20])
        let (_, maxDimension) = try convertedImage(try bands(), .png, to: .png, maxDimension: 30)
        XCTAssertEqual(image, maxDimension)
    }

    func testCenterCropCutsTheMiddleSquareOfTheKeepRatioImage() throws {
        let image = try resized(try bands(), 20, .centerCrop)
        XCTAssertEqual([image.width, image.height], [20, 20])
        // The keep-ratio image is 30 wide with bands of 10: the crop keeps columns 5..<25.
        XCTAssertEqual(image.pixel(0, 10), Self.red)
        XCTAssertEqual(image.pixel(4, 0), Self.red)
        XCTAssertEqual(image.pixel(10, 19), Self.green)
        XCTAssertEqual(image.pixel(15, 10), Self.blue)
        XCTAssertEqual(image.pixel(19, 10), Self.blue)
    }

    func testPadCentersTheKeepRatioLargestImageOnThePadColor() throws {
        let white = Resize.Color(red: 255, green: 255, blue: 255)
        let image = try resized(try bands(), 40, .pad, padColor: white)
        XCTAssertEqual([image.width, image.height], [40, 40])
        // 60 × 40 becomes 40 × 27, 6 rows of pad above and 7 below.
        for y in [0, 5, 33, 39] { XCTAssertEqual(image.pixel(20, y), [255, 255, 255], "row \(y)") }
        for y in [6, 20, 32] {
            XCTAssertEqual(image.pixel(1, y), Self.red, "row \(y)")
            XCTAssertEqual(image.pixel(20, y), Self.green, "row \(y)")
            XCTAssertEqual(image.pixel(38, y), Self.blue, "row \(y)")
        }
    }

    func testSmallImagesAreNotEnlargedWithoutUpscale() throws {
        let source = try bands()
        for fit in [Resize.Fit.keepRatio, .keepRatioLargest, .centerCrop] {
            let image = try resized(source, 100, fit)
            XCTAssertEqual([image.width, image.height], [60, 40], fit.rawValue)
            XCTAssertEqual(image, try decodePNG(source), fit.rawValue)
        }
        // A crop no larger than N on either side: 60 × 40 stays whole under 50, loses 10 columns under 50.
        XCTAssertEqual(try resized(source, 50, .centerCrop).width, 50)
        // Pad still makes N × N, the image unscaled in the middle.
        let padded = try resized(source, 100, .pad)
        XCTAssertEqual([padded.width, padded.height], [100, 100])
        XCTAssertEqual(padded.pixel(19, 50), [0, 0, 0])
        XCTAssertEqual(padded.pixel(20, 30), Self.red)
        XCTAssertEqual(padded.pixel(79, 69), Self.blue)
        XCTAssertEqual(padded.pixel(80, 69), [0, 0, 0])
        XCTAssertEqual(padded.pixel(50, 70), [0, 0, 0])
    }

    func testUpscaleEnlargesEveryMode() throws {
        let source = try bands()
        let wide = try resized(source, 80, .keepRatio, upscale: true)
        XCTAssertEqual([wide.width, wide.height], [120, 80])
        XCTAssertEqual(wide.pixel(10, 40), Self.red)
        XCTAssertEqual(wide.pixel(60, 0), Self.green)
        XCTAssertEqual(wide.pixel(110, 79), Self.blue)
        XCTAssertEqual([try resized(source, 90, .keepRatioLargest, upscale: true)].map { [$0.width, $0.height] }, [[90, 60]])
        let crop = try resized(source, 80, .centerCrop, upscale: true)
        XCTAssertEqual([crop.width, crop.height], [80, 80])
        XCTAssertEqual(crop.pixel(40, 40), Self.green)
        let pad = try resized(source, 90, .pad, upscale: true)
        XCTAssertEqual([pad.width, pad.height], [90, 90])
        XCTAssertEqual(pad.pixel(45, 10), [0, 0, 0])
        XCTAssertEqual(pad.pixel(45, 45), Self.green)
    }

    func testUpscaleInterpolatesBetweenPixelCenters() throws {
        // Two gray pixels, 0 and 240, become four: the outer ones keep their value, the inner ones blend.
        let bytes = try Fixtures.png([0, 240], width: 2, height: 1, options: Fixtures.pngOptions(colorType: 0, bitDepth: 8))
        let (_, image) = try convertedImage(bytes, .png, to: .png, resize: Resize(size: 4, fit: .keepRatioLargest, upscale: true))
        XCTAssertEqual([image.width, image.height], [4, 2])
        XCTAssertEqual(Array(image.samples.prefix(4)), [0, 60, 180, 240])
        XCTAssertEqual(Array(image.samples.suffix(4)), [0, 60, 180, 240])
    }

    func testUpscaledTransparentPixelsDoNotBleedTheirColor() throws {
        // An opaque white pixel beside a transparent black one: the blend stays white, only alpha falls.
        let bytes = try Fixtures.png([255, 255, 255, 255, 0, 0, 0, 0], width: 2, height: 1,
                                     options: Fixtures.pngOptions(colorType: 6, bitDepth: 8))
        let (_, image) = try convertedImage(bytes, .png, to: .png, resize: Resize(size: 4, fit: .keepRatioLargest, upscale: true))
        XCTAssertEqual(image.pixel(1, 0), [255, 255, 255, 191])
        XCTAssertEqual(image.pixel(2, 0)[3], 64)
    }

    func testCropAndPadApplyToTheOrientedImage() throws {
        // Stored 60 × 40 with orientation 6 (rotate right): shown 40 × 60, bands running across.
        var sample = PNGSample(.rgb, bitDepth: 8, width: 60, height: 40)
        sample.rows = Array(try decodePNG(try bands()).pixels)
        let rotated = try sample.encoded(orientation: 6)
        let (_, crop) = try convertedImage(rotated, .png, to: .png, resize: Resize(size: 20, fit: .centerCrop))
        let reference = boxReference(sample.expected, width: 30, height: 20).oriented(6)
        XCTAssertEqual([crop.width, crop.height], [20, 20])
        XCTAssertSameImage(crop, reference.cropped(x: 0, y: 5, width: 20, height: 20), tolerance: 1)
        let (_, pad) = try convertedImage(rotated, .png, to: .png, resize: Resize(size: 40, fit: .pad))
        XCTAssertEqual([pad.width, pad.height], [40, 40])
        // Shown 27 × 40 (rounded from 26.7): 6 columns of pad (white by default) on the left, 7 on the right.
        XCTAssertEqual(pad.pixel(5, 20), [255, 255, 255])
        XCTAssertEqual(pad.pixel(6, 1), Self.red)
        XCTAssertEqual(pad.pixel(20, 38), Self.blue)
        XCTAssertEqual(pad.pixel(33, 20), [255, 255, 255])
    }

    func testPadFillsGrayAndSixteenBitImagesInTheirOwnLayout() throws {
        let color = Resize.Color(red: 200, green: 100, blue: 50)
        for (colorType, depth, expected) in [(PNGSample.ColorType.gray, 8, [Int(color.luma)]), (.gray, 16, [Int(color.luma) * 257]),
                                             (.rgba, 16, [200 * 257, 100 * 257, 50 * 257, 65535]), (.grayAlpha, 8, [Int(color.luma), 255])] {
            let sample = PNGSample(colorType, bitDepth: depth, width: 10, height: 4)
            let (_, image) = try convertedImage(try sample.encoded(), .png, to: .png, resize: Resize(size: 10, fit: .pad, padColor: color))
            XCTAssertEqual([image.width, image.height, image.bitDepth], [10, 10, depth])
            XCTAssertEqual(image.pixel(5, 0), expected, "\(colorType) \(depth)")
            XCTAssertEqual(image.pixel(5, 9), expected, "\(colorType) \(depth)")
            XCTAssertEqual(image.cropped(x: 0, y: 3, width: 10, height: 4), sample.expected, "\(colorType) \(depth)")
        }
        XCTAssertEqual(color.luma, 124)
    }

    func testJPEGOutputsOfEveryModeHaveTheModesSize() throws {
        let source = try bands()
        for (fit, size) in [(Resize.Fit.keepRatio, [30, 20]), (.keepRatioLargest, [20, 13]), (.centerCrop, [20, 20]), (.pad, [20, 20])] {
            let image = try resized(source, 20, fit, to: .jpeg)
            XCTAssertEqual([image.width, image.height], size, fit.rawValue)
        }
    }

    func testAnUpscaleBeyondTheMaxPixelsFails() throws {
        let bytes = try Fixtures.png([0, 240], width: 2, height: 1, options: Fixtures.pngOptions(colorType: 0, bitDepth: 8))
        let (result, _) = try convert(bytes, .png, to: .png, resize: Resize(size: 4000, fit: .keepRatio, upscale: true),
                                      limits: DecodeLimits(maxPixels: 1_000_000))
        guard case .failure(let error) = result else { return XCTFail("an 8000 × 4000 output was written") }
        XCTAssertEqual(error.kind, .tooLarge)
        XCTAssertTrue(error.message.contains("--max-pixels"), error.message)
    }

    func testScalePlans() {
        func plan(_ w: Int, _ h: Int, _ size: Int, _ fit: Resize.Fit, upscale: Bool = false, _ orientation: ExifOrientation = .up) -> [Int] {
            let p = ScalePlan(width: w, height: h, resize: Resize(size: size, fit: fit, upscale: upscale), orientation: orientation, format: .png)
            return [p.targetWidth, p.targetHeight, p.canvasWidth, p.canvasHeight]
        }
        XCTAssertEqual(plan(4000, 3000, 256, .keepRatio), [341, 256, 341, 256])
        XCTAssertEqual(plan(4000, 3000, 256, .keepRatioLargest), [256, 192, 256, 192])
        XCTAssertEqual(plan(4000, 3000, 256, .centerCrop), [341, 256, 256, 256])
        XCTAssertEqual(plan(4000, 3000, 256, .pad), [256, 192, 256, 256])
        XCTAssertEqual(plan(3000, 4000, 256, .centerCrop, .right), [256, 341, 256, 256])
        XCTAssertEqual(plan(100, 10, 256, .centerCrop), [100, 10, 100, 10])
        XCTAssertEqual(plan(100, 10, 256, .centerCrop, upscale: true), [2560, 256, 256, 256])
        XCTAssertEqual(plan(100, 10, 50, .pad, .left), [50, 5, 50, 50])
        XCTAssertEqual(plan(1, 1000, 10, .keepRatio), [1, 1000, 1, 1000])
    }
}
