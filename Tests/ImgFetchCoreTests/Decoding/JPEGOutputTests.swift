import XCTest
@testable import ImgFetchCore

/// `--save-as jpeg`: every source layout becomes an 8-bit gray or RGB JPEG, alpha composited onto
/// black, decoded back within a PSNR floor.
final class JPEGOutputTests: CodecTestCase {
    /// At the default quality (95) a smooth picture comes back well above this; the floor leaves room
    /// for libjpeg-turbo versions, not for a wrong channel order or a missing composite.
    static let psnrFloor = 35.0

    /// The 8-bit gray or RGB pixels a JPEG of `image` should hold: 16-bit samples rounded to 8,
    /// alpha composited onto white, the default background.
    private func expectedJPEGPixels(_ image: Image) -> (channels: Int, samples: [Int]) {
        let samples = image.samples.map { image.bitDepth == 16 ? ($0 * 255 + 32767) / 65535 : $0 }
        let hasAlpha = image.channels == 2 || image.channels == 4
        guard hasAlpha else { return (image.channels, samples) }
        let color = image.channels - 1
        var out: [Int] = []
        for pixel in stride(from: 0, to: samples.count, by: image.channels) {
            let alpha = samples[pixel + color]
            // Over white, the default background: (c × a + 255 × (255 − a)) / 255.
            for channel in 0..<color { out.append((samples[pixel + channel] * alpha + 255 * (255 - alpha) + 127) / 255) }
        }
        return (color, out)
    }

    func testEveryLayoutBecomesGrayOrRGBWithinThePSNRFloor() throws {
        for (colorType, depth) in [(PNGSample.ColorType.gray, 8), (.gray, 16), (.grayAlpha, 8), (.grayAlpha, 16), (.rgb, 8), (.rgb, 16),
                                   (.rgba, 8), (.rgba, 16), (.palette, 8)] {
            let sample = PNGSample.gradient(colorType, bitDepth: depth)
            let (converted, image) = try convertedImage(try sample.encoded(), .png, to: .jpeg)
            let expected = expectedJPEGPixels(sample.expected)
            XCTAssertEqual(image.channels, expected.channels, "\(colorType) \(depth)")
            XCTAssertEqual(converted.channels, expected.channels)
            XCTAssertEqual(converted.bitDepth, 8)
            XCTAssertEqual([image.width, image.height], [64, 48])
            let quality = psnr(image.samples, expected.samples)
            XCTAssertGreaterThan(quality, Self.psnrFloor, "\(colorType) \(depth): \(quality) dB")
        }
    }

    func testALowerQualityMakesASmallerFile() throws {
        let source = try PNGSample.gradient(.rgb, bitDepth: 8).encoded()
        let input = try write(source, name: "q.png")
        var sizes: [Int] = []
        for quality in [30, 95] {
            let outputPath = directory + "/q\(quality).jpg"
            let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let conversion = ImageConversion(pixelFormat: .jpeg, resize: nil, output: fd, scratchDirectory: directory,
                                             memoryBudget: ImageCodec.defaultPixelMemory, quality: quality)
            _ = try ImageCodec.convert(.file(path: input), format: .png, conversion: conversion, limits: DecodeLimits()).get()
            close(fd)
            sizes.append(try Data(contentsOf: URL(fileURLWithPath: outputPath)).count)
        }
        XCTAssertLessThan(sizes[0], sizes[1], "quality 30 was not smaller than 95: \(sizes)")
    }

    func testTheOutputKindNamesTheQuality() {
        var configuration = DownloaderConfiguration(outputDirectory: ".")
        configuration.saveAs = .pixels(.jpeg)
        // JPEG names what it flattens transparency onto: black, the only one before --background, unnamed.
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "jpeg@q95:on-ffffff")
        configuration.background = .black
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "jpeg@q95")
        configuration.quality = 80
        configuration.resize = Resize(size: 256)
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "jpeg@q80:256")
        configuration.saveAs = .pixels(.png)
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "png:256", "lossless kinds are as before")
    }
}
