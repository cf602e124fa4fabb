import XCTest
@testable import ImgFetchCore

/// The conversion stages on their own: orientation (in memory, on disk, in narrow bands) and the box filter.
final class CodecPipelineTests: CodecTestCase {
    private func image(width: Int, height: Int, channels: Int) -> Image {
        Image(width: width, height: height, channels: channels, pixels: Fixtures.noise(count: width * height * channels))
    }

    private func image16(width: Int, height: Int, channels: Int) -> Image {
        Image(width: width, height: height, channels: channels, pixels: Fixtures.noise(count: width * height * channels * 2), bitDepth: 16)
    }

    private func oriented(_ source: Image, _ orientation: Int, memoryBudget: Int, bandBudget: Int) throws -> Image {
        let exif = try XCTUnwrap(ExifOrientation(rawValue: orientation))
        let size = exif.outputSize(width: source.width, height: source.height)
        let collector = CollectingSink(rowBytes: size.width * source.pixelBytes)
        let sink = try OrientingSink(orientation: exif, width: source.width, height: source.height, pixelBytes: source.pixelBytes,
                                     next: collector, memoryBudget: memoryBudget, bandBudget: bandBudget,
                                     scratchDirectory: directory)
        try CollectingSink.feed(source, into: sink)
        XCTAssertTrue(collector.finished)
        return Image(width: size.width, height: size.height, channels: source.channels, pixels: collector.pixels,
                     bitDepth: source.bitDepth)
    }

    func testEveryOrientationInMemoryOnDiskAndInNarrowBands() throws {
        for (width, height) in [(1, 1), (1, 5), (5, 1), (13, 7)] {
            let source = image(width: width, height: height, channels: 3)
            XCTAssertSameImage(try oriented(image16(width: width, height: height, channels: 2), 6, memoryBudget: 0, bandBudget: 1),
                               image16(width: width, height: height, channels: 2).oriented(6))
            for orientation in 1...8 {
                let expected = source.oriented(orientation)
                for (memory, band) in [(1 << 20, 1 << 20), (0, 1 << 20), (0, 1), (0, 3 * height * 2), (1 << 20, 3 * height * 4)] {
                    XCTAssertSameImage(try oriented(source, orientation, memoryBudget: memory, bandBudget: band), expected)
                }
            }
        }
    }

    func testExifOrientationMapsOntoTheDefinition() {
        let (width, height) = (5, 3)
        for orientation in 1...8 {
            let exif = ExifOrientation(rawValue: orientation)!
            XCTAssertEqual(exif.transposes, orientation >= 5)
            // Orientation 6 means "rotate 90° clockwise to view": the stored bottom-left corner ends up top-left.
            if orientation == 6 {
                XCTAssertTrue(exif.sourcePixel(x: 0, y: 0, width: width, height: height) == (0, height - 1))
            }
            if orientation == 8 {
                XCTAssertTrue(exif.sourcePixel(x: 0, y: 0, width: width, height: height) == (width - 1, 0))
            }
        }
    }

    func testRasterOnDiskReadsZerosBeforeWrites() throws {
        let raster = try Raster(width: 4, height: 3, pixelBytes: 3, memoryBudget: 0, scratchDirectory: directory)
        XCTAssertTrue(raster.isOnDisk)
        var row = [UInt8](repeating: 9, count: 12)
        try row.withUnsafeMutableBufferPointer { try raster.read(row: 2, into: $0.baseAddress!) }
        XCTAssertEqual(row, [UInt8](repeating: 0, count: 12))
        let written: [UInt8] = Array(1...12)
        try written.withUnsafeBufferPointer { try raster.write(row: 1, from: $0.baseAddress!) }
        try row.withUnsafeMutableBufferPointer { try raster.read(row: 1, pixel: 1, count: 2, into: $0.baseAddress!) }
        XCTAssertEqual(Array(row.prefix(6)), [4, 5, 6, 7, 8, 9])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [], "scratch files are unlinked at once")
    }

    func testRasterWithinBudgetStaysInMemory() throws {
        let raster = try Raster(width: 4, height: 3, pixelBytes: 3, memoryBudget: 36, scratchDirectory: directory)
        XCTAssertFalse(raster.isOnDisk)
    }

    // MARK: - Box filter

    private func downscaled(_ source: Image, width: Int, height: Int) throws -> Image {
        let collector = CollectingSink(rowBytes: width * source.pixelBytes)
        let sink = BoxDownscaler(sourceWidth: source.width, sourceHeight: source.height, targetWidth: width, targetHeight: height,
                                 layout: PixelLayout(channels: source.channels, bitDepth: source.bitDepth), next: collector)
        try CollectingSink.feed(source, into: sink)
        return Image(width: width, height: height, channels: source.channels, pixels: collector.pixels, bitDepth: source.bitDepth)
    }

    func testBoxFilterAveragesWholeBlocks() throws {
        let source = Image(width: 4, height: 2, channels: 3, pixels: [
            0, 0, 0, 10, 20, 30, 100, 100, 100, 200, 200, 200,
            20, 40, 60, 30, 60, 90, 0, 0, 0, 255, 255, 255,
        ])
        let result = try downscaled(source, width: 2, height: 1)
        XCTAssertEqual(result.pixels, [15, 30, 45, 139, 139, 139])
    }

    func testBoxFilterWeighsPartialCoverage() throws {
        // Three pixels into two: each output covers 1.5 source pixels.
        let source = Image(width: 3, height: 1, channels: 3, pixels: [0, 0, 0, 90, 90, 90, 255, 255, 255])
        XCTAssertEqual(try downscaled(source, width: 2, height: 1).pixels, [30, 30, 30, 200, 200, 200])
        let column = Image(width: 1, height: 3, channels: 3, pixels: [0, 0, 0, 90, 90, 90, 255, 255, 255])
        XCTAssertEqual(try downscaled(column, width: 1, height: 2).pixels, [30, 30, 30, 200, 200, 200])
    }

    func testBoxFilterWeighsColorsByAlpha() throws {
        // A transparent black pixel next to opaque red: the color stays red, the alpha halves.
        let source = Image(width: 2, height: 1, channels: 4, pixels: [0, 0, 0, 0, 255, 0, 0, 255])
        XCTAssertEqual(try downscaled(source, width: 1, height: 1).pixels, [255, 0, 0, 128])
        let clear = Image(width: 2, height: 1, channels: 4, pixels: [10, 20, 30, 0, 40, 50, 60, 0])
        XCTAssertEqual(try downscaled(clear, width: 1, height: 1).pixels, [0, 0, 0, 0])
    }

    func testBoxFilterMatchesTheNaiveDefinition() throws {
        for (sw, sh, dw, dh) in [(37, 23, 10, 6), (100, 3, 7, 1), (5, 50, 5, 13), (64, 64, 1, 1), (9, 9, 9, 9)] {
            for channels in 1...4 {
                let source = image(width: sw, height: sh, channels: channels)
                XCTAssertSameImage(try downscaled(source, width: dw, height: dh), boxReference(source, width: dw, height: dh), tolerance: 1)
                let deep = image16(width: sw, height: sh, channels: channels)
                XCTAssertSameImage(try downscaled(deep, width: dw, height: dh), boxReference(deep, width: dw, height: dh), tolerance: 1)
            }
        }
    }

    func testBoxFilterWeighsGrayByAlphaAt16Bits() throws {
        // Gray + alpha, 16-bit: transparent black beside opaque white keeps the white, halves the alpha.
        let source = Image(width: 2, height: 1, channels: 2, bitDepth: 16, samples: [0, 0, 65535, 65535])
        XCTAssertEqual(try downscaled(source, width: 1, height: 1).samples, [65535, 32768])
    }

    func testFlatColorStaysExact() throws {
        let source = Image(width: 17, height: 11, channels: 3, pixels: [UInt8](repeating: 77, count: 17 * 11 * 3))
        XCTAssertEqual(try downscaled(source, width: 5, height: 3).pixels, [UInt8](repeating: 77, count: 45))
    }

    // MARK: - Scale plan

    func testScalePlanKeepsTheAspectRatioAndRoundsToNearest() {
        XCTAssertEqual(ScalePlan(width: 37, height: 23, resize: Resize(size: 10), format: .png), ScalePlan(targetWidth: 10, targetHeight: 6, dctNumerator: 8))
        XCTAssertEqual(ScalePlan(width: 20, height: 40, resize: Resize(size: 7), format: .png), ScalePlan(targetWidth: 4, targetHeight: 7, dctNumerator: 8))
        XCTAssertEqual(ScalePlan(width: 1000, height: 1, resize: Resize(size: 10), format: .png), ScalePlan(targetWidth: 10, targetHeight: 1, dctNumerator: 8))
        XCTAssertEqual(ScalePlan(width: 30, height: 20, resize: Resize(size: 30), format: .jpeg), ScalePlan(targetWidth: 30, targetHeight: 20, dctNumerator: 8))
        XCTAssertEqual(ScalePlan(width: 30, height: 20, resize: nil, format: .jpeg), ScalePlan(targetWidth: 30, targetHeight: 20, dctNumerator: 8))
    }

    func testScalePlanDecodesAtHalfSizeOnlyWhenTheBoxFilterStillHalvesIt() {
        // 4000 → 1000: 4/8 (2000), then the box filter halves it. The 1/8 and 2/8 IDCTs alias fine
        // detail where INTER_AREA does not (DownscaleQualityTests): never used.
        XCTAssertEqual(ScalePlan(width: 4000, height: 3000, resize: Resize(size: 1000), format: .jpeg),
                       ScalePlan(targetWidth: 1000, targetHeight: 750, dctNumerator: 4))
        XCTAssertEqual(ScalePlan(width: 4000, height: 3000, resize: Resize(size: 1001), format: .jpeg),
                       ScalePlan(targetWidth: 1001, targetHeight: 751, dctNumerator: 8))
        // 640 → 341 (a 256 px center crop): decoded whole.
        XCTAssertEqual(ScalePlan(width: 640, height: 480, resize: Resize(size: 256, fit: .centerCrop), format: .jpeg).dctNumerator, 8)
        XCTAssertEqual(ScalePlan(width: 10000, height: 10000, resize: Resize(size: 100), format: .jpeg),
                       ScalePlan(targetWidth: 100, targetHeight: 100, dctNumerator: 4))
        XCTAssertEqual(ScalePlan(width: 4000, height: 3000, resize: Resize(size: 1000), format: .png).dctNumerator, 8)
        // A gallery preview favours speed: the smallest fast scale that does not undershoot.
        XCTAssertEqual(ScalePlan(width: 4000, height: 3000, resize: Resize(size: 256), format: .jpeg, fastest: true).dctNumerator, 1)
        XCTAssertEqual(ScalePlan(width: 4000, height: 3000, resize: Resize(size: 1001), format: .jpeg, fastest: true).dctNumerator, 4)
    }
}
