import XCTest
@testable import ImgFetchCore

final class PNGConvertTests: CodecTestCase {
    private let variants: [(PNGSample.ColorType, [Int])] = [
        (.gray, [1, 2, 4, 8, 16]), (.grayAlpha, [8, 16]), (.rgb, [8, 16]), (.rgba, [8, 16]), (.palette, [1, 2, 4, 8]),
    ]

    private func assertConverts(_ sample: PNGSample, to format: PixelFormat = .pam, memoryBudget: Int = ImageCodec.defaultPixelMemory,
                                orientation: Int = 0, _ label: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        let (converted, image) = try convertedImage(try sample.encoded(orientation: orientation), .png, to: format,
                                                    memoryBudget: memoryBudget, file: file, line: line)
        var expected = sample.expected.oriented(max(1, orientation))
        if format == .ppm { expected = expected.asRGB() }
        XCTAssertSameImage(image, expected, file: file, line: line)
        XCTAssertEqual(converted.source.verified, true, label, file: file, line: line)
    }

    func testEveryColorTypeAndBitDepthIsExact() throws {
        for (colorType, depths) in variants {
            for depth in depths {
                for interlaced in [false, true] {
                    var sample = PNGSample(colorType, bitDepth: depth, width: 37, height: 23, seed: UInt32(depth))
                    sample.interlaced = interlaced
                    try assertConverts(sample, "\(colorType) \(depth) interlaced \(interlaced)")
                }
            }
        }
    }

    func testTransparencyBecomesAlpha() throws {
        var palette = PNGSample(.palette, bitDepth: 2, width: 19, height: 7)
        palette.paletteAlpha = [0, 99]
        var gray = PNGSample(.gray, bitDepth: 2, width: 19, height: 7)
        gray.transparent = [gray.sample(0, 0)]
        var gray16 = PNGSample(.gray, bitDepth: 16, width: 19, height: 7)
        gray16.transparent = [gray16.sample(3, 5)]
        var rgb = PNGSample(.rgb, bitDepth: 8, width: 19, height: 7)
        rgb.transparent = (0..<3).map { rgb.sample(1, $0) }
        for sample in [palette, gray, gray16, rgb] {
            XCTAssertTrue(sample.expected.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element == 0 })
            try assertConverts(sample, "\(sample.colorType)")
        }
    }

    func testToPNGAndPPM() throws {
        for sample in [PNGSample(.rgba, bitDepth: 16, width: 33, height: 9), PNGSample(.gray, bitDepth: 4, width: 33, height: 9)] {
            try assertConverts(sample, to: .png)
            try assertConverts(sample, to: .ppm)
        }
    }

    func testInterlacedTinyImagesWhereSomePassesAreEmpty() throws {
        for (width, height) in [(1, 1), (1, 9), (9, 1), (2, 3), (3, 2), (4, 5), (5, 4), (8, 8), (9, 9)] {
            var sample = PNGSample(.rgb, bitDepth: 8, width: width, height: height)
            sample.interlaced = true
            try assertConverts(sample, "\(width)×\(height)")
            try assertConverts(sample, memoryBudget: 0, "\(width)×\(height) on disk")
        }
    }

    func testInterlacedImageAssembledOnDisk() throws {
        var sample = PNGSample(.rgba, bitDepth: 8, width: 101, height: 67)
        sample.interlaced = true
        try assertConverts(sample, memoryBudget: 0)
        try assertConverts(sample, to: .png, memoryBudget: 1000)
    }

    func testAPNGConvertsTheDefaultImage() throws {
        let sample = PNGSample(.rgb, bitDepth: 8, width: 21, height: 13)
        let (_, image) = try convertedImage(try sample.encoded(apng: true), .png, to: .pam)
        XCTAssertSameImage(image, sample.expected)
    }

    func testTextChunksDoNotDisturbThePixels() throws {
        let sample = PNGSample(.palette, bitDepth: 8, width: 21, height: 13)
        let (_, image) = try convertedImage(try sample.encoded(textChunks: 3000), .png, to: .pam)
        XCTAssertSameImage(image, sample.expected)
    }

    func testEveryExifOrientationInMemoryAndOnDisk() throws {
        let sample = PNGSample(.rgba, bitDepth: 8, width: 13, height: 7)
        for orientation in 1...8 {
            try assertConverts(sample, orientation: orientation, "orientation \(orientation)")
            try assertConverts(sample, memoryBudget: 0, orientation: orientation, "orientation \(orientation) on disk")
        }
    }

    func testDownscaleMatchesAreaAveraging() throws {
        for sample in [PNGSample(.rgb, bitDepth: 8, width: 37, height: 23), PNGSample(.rgba, bitDepth: 8, width: 37, height: 23)] {
            let (converted, image) = try convertedImage(try sample.encoded(), .png, to: .pam, maxDimension: 10)
            XCTAssertEqual([converted.width, converted.height], [10, 6])
            XCTAssertSameImage(image, boxReference(sample.expected, width: 10, height: 6), tolerance: 1)
        }
    }

    func testDownscaleWithRotation() throws {
        let sample = PNGSample(.rgb, bitDepth: 8, width: 40, height: 20)
        let (converted, image) = try convertedImage(try sample.encoded(orientation: 6), .png, to: .ppm, maxDimension: 8)
        XCTAssertEqual([converted.width, converted.height], [4, 8])
        XCTAssertSameImage(image, boxReference(sample.expected, width: 8, height: 4).oriented(6), tolerance: 1)
    }

    func testNoDownscaleWhenAlreadySmallEnough() throws {
        let sample = PNGSample(.rgb, bitDepth: 8, width: 40, height: 20)
        let (converted, image) = try convertedImage(try sample.encoded(), .png, to: .ppm, maxDimension: 40)
        XCTAssertEqual([converted.width, converted.height], [40, 20])
        XCTAssertSameImage(image, sample.expected)
    }

    func testFailedConversionReportsTheDecodeError() throws {
        let bytes = try PNGSample(.rgb, bitDepth: 8, width: 40, height: 20).encoded()
        let (result, _) = try convert(Array(bytes.prefix(bytes.count - 20)), .png, to: .ppm)
        XCTAssertEqual(result, .failure(DownloadError(.truncated, "invalid PNG: Premature end of PNG file")))
    }

    func testScratchFilesNeverRemain() throws {
        var sample = PNGSample(.rgb, bitDepth: 8, width: 30, height: 30)
        sample.interlaced = true
        _ = try convert(try sample.encoded(orientation: 7), .png, to: .pam, memoryBudget: 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        XCTAssertEqual(names.filter { $0.hasPrefix(".imgfetch-raster") }, [])
    }
}
