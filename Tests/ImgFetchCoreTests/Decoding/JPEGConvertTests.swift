import CImageCodec
import CImageCodecFixtures
import XCTest
@testable import ImgFetchCore

/// JPEG conversions compared pixel by pixel with libjpeg's own decode of the same file.
final class JPEGConvertTests: CodecTestCase {
    private let width = 53, height = 35

    private func jpeg(_ options: imgcodec_test_jpeg_options = Fixtures.jpegOptions(), channels: Int = 3) throws -> [UInt8] {
        try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: channels), width: width, height: height, options: options)
    }

    private func assertMatchesLibjpeg(_ bytes: [UInt8], to format: PixelFormat = .ppm, cmykInverted: Bool? = nil,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        var reference = try Fixtures.referenceDecode(bytes)
        if let cmykInverted { reference = reference.cmykToRGB(inverted: cmykInverted) }
        // libjpeg's reference decode gives RGB; a gray JPEG stays gray except in a PPM.
        if bytes.withUnsafeBytes({ ImageCodec.probe(.memory($0), format: .jpeg) })?.channels == 1 && format != .ppm {
            reference = reference.firstChannel()
        }
        let (converted, image) = try convertedImage(bytes, .jpeg, to: format, file: file, line: line)
        XCTAssertEqual(converted.source.verified, true, file: file, line: line)
        XCTAssertSameImage(image, reference, file: file, line: line)
    }

    func testBaselineProgressiveAndArithmetic() throws {
        for options in [Fixtures.jpegOptions(), Fixtures.jpegOptions(progressive: true), Fixtures.jpegOptions(arithmetic: true),
                        Fixtures.jpegOptions(quality: 40, progressive: true, arithmetic: true)] {
            for format in PixelFormat.lossless {
                try assertMatchesLibjpeg(try jpeg(options), to: format)
            }
        }
    }

    func testFullChroma() throws {
        var options = Fixtures.jpegOptions()
        options.full_chroma = 1
        try assertMatchesLibjpeg(try jpeg(options))
    }

    func testGrayscaleStaysGrayExceptInPPM() throws {
        let gray = try jpeg(Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_GRAY)), channels: 1)
        for format in PixelFormat.lossless { try assertMatchesLibjpeg(gray, to: format) }
        XCTAssertEqual(try convertedImage(gray, .jpeg, to: .pam).1.channels, 1)
        XCTAssertEqual(try convertedImage(gray, .jpeg, to: .png).1.channels, 1)
        let (_, image) = try convertedImage(gray, .jpeg, to: .ppm)
        XCTAssertEqual(image.channels, 3)
        let pixels = image.pixels
        let allGray = stride(from: 0, to: pixels.count, by: 3).allSatisfy { (i: Int) -> Bool in
            pixels[i] == pixels[i + 1] && pixels[i] == pixels[i + 2]
        }
        XCTAssertTrue(allGray)
    }

    func testAdobeCMYKAndYCCKAreInverted() throws {
        try assertMatchesLibjpeg(try jpeg(Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_CMYK)), channels: 4), cmykInverted: true)
        try assertMatchesLibjpeg(try jpeg(Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_YCCK)), channels: 4), cmykInverted: true)
    }

    func testPlainCMYKIsNotInverted() throws {
        var options = Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_CMYK))
        options.no_adobe_marker = 1
        try assertMatchesLibjpeg(try jpeg(options, channels: 4), cmykInverted: false)
    }

    func testCMYKColors() throws {
        // Flat Adobe-inverted CMYK (255 = no ink): cyan ink only shows as cyan, full black as black.
        let cyan: [UInt8] = [0, 255, 255, 255], black: [UInt8] = [255, 255, 255, 0]
        let pixels = (0..<(16 * 16)).flatMap { $0 % 16 < 8 ? cyan : black }
        var options = Fixtures.jpegOptions(quality: 100, colorSpace: Int32(IMGCODEC_TEST_JPEG_CMYK))
        options.full_chroma = 1
        let bytes = try Fixtures.jpeg(pixels, width: 16, height: 16, options: options)
        let (_, image) = try convertedImage(bytes, .jpeg, to: .ppm)
        XCTAssertSameImage(Image(width: 1, height: 1, channels: 3, bitDepth: 8, samples: image.pixel(2, 2)),
                           Image(width: 1, height: 1, channels: 3, pixels: [0, 255, 255]), tolerance: 3)
        XCTAssertSameImage(Image(width: 1, height: 1, channels: 3, bitDepth: 8, samples: image.pixel(13, 13)),
                           Image(width: 1, height: 1, channels: 3, pixels: [0, 0, 0]), tolerance: 3)
    }

    func testEveryExifOrientation() throws {
        for orientation in 1...8 {
            let bytes = try jpeg(Fixtures.jpegOptions(orientation: Int32(orientation)))
            let reference = try Fixtures.referenceDecode(bytes).oriented(orientation)
            for budget in [ImageCodec.defaultPixelMemory, 0] {
                let (converted, image) = try convertedImage(bytes, .jpeg, to: .ppm, memoryBudget: budget)
                XCTAssertEqual(converted.source.orientation, orientation)
                XCTAssertEqual([converted.width, converted.height], orientation >= 5 ? [height, width] : [width, height])
                XCTAssertSameImage(image, reference)
            }
        }
    }

    func testRotatedPixelsLandInTheRightPlace() throws {
        // A red top-left quadrant in a 32×16 white image stored with orientation 6 (rotate 90° clockwise):
        // upright, the red block sits top-right.
        var pixels = [UInt8](repeating: 255, count: 32 * 16 * 3)
        for y in 0..<8 { for x in 0..<16 { pixels[(y * 32 + x) * 3 + 1] = 0; pixels[(y * 32 + x) * 3 + 2] = 0 } }
        var options = Fixtures.jpegOptions(quality: 100, orientation: 6)
        options.full_chroma = 1
        let (converted, image) = try convertedImage(try Fixtures.jpeg(pixels, width: 32, height: 16, options: options), .jpeg, to: .ppm)
        XCTAssertEqual([converted.width, converted.height], [16, 32])
        XCTAssertEqual(image.pixel(12, 3).map { $0 > 128 }, [true, false, false], "top right is red")
        XCTAssertEqual(image.pixel(3, 3).map { $0 > 128 }, [true, true, true], "top left is white")
        XCTAssertEqual(image.pixel(12, 28).map { $0 > 128 }, [true, true, true], "bottom right is white")
    }

    func testHalfSizeDCTScalingThenTheBoxFilterHalvesIt() throws {
        // 53 → 13: 27 × 18 at 4/8 is still twice the target, and the box filter does the rest.
        let bytes = try jpeg()
        let (converted, image) = try convertedImage(bytes, .jpeg, to: .ppm, maxDimension: 13)
        XCTAssertEqual([converted.width, converted.height], [13, 9])
        let scaled = try Fixtures.referenceDecode(bytes, scaleNumerator: 4)
        XCTAssertEqual([scaled.width, scaled.height], [27, 18])
        XCTAssertSameImage(image, boxReference(scaled, width: 13, height: 9), tolerance: 1)
    }

    func testUnderTwiceTheTargetAtHalfSizeTheWholeImageIsBoxFiltered() throws {
        let bytes = try jpeg()
        let (converted, image) = try convertedImage(bytes, .jpeg, to: .ppm, maxDimension: 20)
        XCTAssertEqual([converted.width, converted.height], [20, 13])
        // 27 × 18 at 4/8 is under twice 20 × 13: decoded whole, as OpenCV's INTER_AREA would shrink it.
        let whole = try Fixtures.referenceDecode(bytes, scaleNumerator: 8)
        XCTAssertSameImage(image, boxReference(whole, width: 20, height: 13), tolerance: 1)
    }

    func testDownscaleWithRotationSwapsTheTarget() throws {
        let bytes = try jpeg(Fixtures.jpegOptions(orientation: 8))
        let (converted, image) = try convertedImage(bytes, .jpeg, to: .png, maxDimension: 20)
        XCTAssertEqual([converted.width, converted.height], [13, 20])
        let whole = try Fixtures.referenceDecode(bytes, scaleNumerator: 8)
        XCTAssertSameImage(image, boxReference(whole, width: 20, height: 13).oriented(8), tolerance: 1)
    }

    func testTinyTarget() throws {
        let (converted, image) = try convertedImage(try jpeg(), .jpeg, to: .ppm, maxDimension: 1)
        XCTAssertEqual([converted.width, converted.height, image.pixels.count], [1, 1, 3])
    }

    func testTruncatedConversionFails() throws {
        let bytes = try jpeg()
        let (result, _) = try convert(Array(bytes.prefix(bytes.count - 2)), .jpeg, to: .png)
        XCTAssertEqual(result, .failure(DownloadError(.truncated, "invalid JPEG: Premature end of JPEG file")))
    }

    func testConversionAppliesTheLimits() throws {
        let (result, output) = try convert(try jpeg(), .jpeg, to: .ppm, limits: DecodeLimits(maxPixels: 100))
        XCTAssertEqual(result, .failure(DownloadError(.tooLarge, "image too large: 53×35 pixels exceeds --max-pixels (100)")))
        XCTAssertEqual(output, [], "nothing is written when the header is refused")
    }

    func testConcurrentConversionsShareNothing() throws {
        var written: [String] = []
        for i in 1...8 {
            let options = Fixtures.jpegOptions(quality: Int32(50 + i), progressive: i % 2 == 0, orientation: Int32(i))
            written.append(try write(try jpeg(options), name: "\(i).jpg"))
        }
        let paths = written
        let expected = try paths.map { try Fixtures.referenceDecode([UInt8](Data(contentsOf: URL(fileURLWithPath: $0)))) }
        let directory = self.directory
        let outputs = paths.indices.map { directory + "/out\($0).pam" }
        DispatchQueue.concurrentPerform(iterations: paths.count * 4) { iteration in
            let i = iteration % paths.count
            if iteration >= paths.count {
                _ = ImageCodec.verify(path: paths[i], format: .jpeg)
                return
            }
            let fd = open(outputs[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            _ = ImageCodec.convert(path: paths[i], format: .jpeg, to: .pam, output: fd, scratchDirectory: directory, memoryBudget: 0)
            close(fd)
        }
        for i in paths.indices {
            let image = try NetpbmReader.read([UInt8](Data(contentsOf: URL(fileURLWithPath: outputs[i]))))
            XCTAssertSameImage(image, expected[i].oriented(i + 1))
        }
    }

    func testProbeReadsOnlyTheHeader() throws {
        var bytes = try jpeg(Fixtures.jpegOptions(orientation: 5))
        XCTAssertEqual(ImageCodec.probe(path: try write(bytes), format: .jpeg),
                       ImageInfo(width: width, height: height, channels: 3, bitDepth: 8, orientation: 5, verified: false))
        let scan = try XCTUnwrap((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        bytes.removeSubrange((scan + 30)...)  // header intact, scan truncated: probing does not notice
        XCTAssertEqual(ImageCodec.probe(path: try write(bytes), format: .jpeg)?.width, width)
        XCTAssertNil(ImageCodec.probe(path: try write(Array("<html>".utf8)), format: .jpeg))
        let png = try PNGSample(.gray, bitDepth: 16, width: 5, height: 4).encoded()
        XCTAssertEqual(ImageCodec.probe(path: try write(png), format: .png),
                       ImageInfo(width: 5, height: 4, channels: 1, bitDepth: 16, verified: false))
        XCTAssertNil(ImageCodec.probe(path: try write(png), format: .gif))
    }
}
