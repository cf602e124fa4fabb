import XCTest
@testable import ImgFetchCore

/// `--save-as webp`: every source layout becomes an 8-bit RGB or RGBA WebP through libwebp,
/// decoded back within a PSNR floor, alpha kept.
final class WebPOutputTests: CodecTestCase {
    /// At the default quality (90) a smooth picture comes back well above this; the floor leaves room
    /// for libwebp versions, not for a wrong channel order or a lost alpha channel.
    static let psnrFloor = 35.0

    /// RGB samples (gray widened) composited onto black, and the alpha samples, of 8-bit `image`.
    private func compare(_ image: Image) -> (color: [Int], alpha: [Int]) {
        let samples = image.samples.map { image.bitDepth == 16 ? ($0 * 255 + 32767) / 65535 : $0 }
        var color: [Int] = [], alpha: [Int] = []
        let hasAlpha = image.channels == 2 || image.channels == 4
        for pixel in stride(from: 0, to: samples.count, by: image.channels) {
            let a = hasAlpha ? samples[pixel + image.channels - 1] : 255
            let rgb = image.channels <= 2 ? Array(repeating: samples[pixel], count: 3) : Array(samples[pixel..<pixel + 3])
            color += rgb.map { ($0 * a + 127) / 255 }
            alpha.append(a)
        }
        return (color, alpha)
    }

    func testEveryLayoutBecomesRGBOrRGBAWithinThePSNRFloor() throws {
        for (colorType, depth) in [(PNGSample.ColorType.gray, 8), (.gray, 16), (.grayAlpha, 8), (.rgb, 8), (.rgb, 16),
                                   (.rgba, 8), (.rgba, 16)] {
            let sample = PNGSample.gradient(colorType, bitDepth: depth)
            let (converted, image) = try convertedImage(try sample.encoded(), .png, to: .webp)
            let hasAlpha = colorType == .grayAlpha || colorType == .rgba
            XCTAssertEqual(image.channels, hasAlpha ? 4 : 3, "\(colorType) \(depth)")
            XCTAssertEqual(converted.channels, image.channels)
            XCTAssertEqual([image.width, image.height, image.bitDepth], [64, 48, 8])
            let (got, want) = (compare(image), compare(sample.expected))
            let quality = psnr(got.color, want.color)
            XCTAssertGreaterThan(quality, Self.psnrFloor, "\(colorType) \(depth): \(quality) dB")
            // libwebp compresses alpha losslessly by default.
            XCTAssertEqual(got.alpha, want.alpha, "\(colorType) \(depth)")
        }
    }

    func testDwebpReadsTheOutputAndALowerQualityIsSmaller() throws {
        let source = try PNGSample.gradient(.rgb, bitDepth: 8).encoded()
        var sizes: [Int] = []
        for quality in [20, 90] {
            let input = try write(source, name: "q.png")
            let outputPath = directory + "/q\(quality).webp"
            let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let conversion = ImageConversion(pixelFormat: .webp, resize: Resize(size: 32, fit: .centerCrop), output: fd,
                                             scratchDirectory: directory, memoryBudget: ImageCodec.defaultPixelMemory, quality: quality)
            let converted = try ImageCodec.convert(.file(path: input), format: .png, conversion: conversion, limits: DecodeLimits()).get()
            close(fd)
            XCTAssertEqual([converted.width, converted.height], [32, 32])
            sizes.append(try Data(contentsOf: URL(fileURLWithPath: outputPath)).count)
            let dwebp = Process()
            dwebp.executableURL = URL(fileURLWithPath: "/usr/bin/dwebp")
            dwebp.arguments = [outputPath, "-ppm", "-o", directory + "/q.ppm"]
            dwebp.standardError = FileHandle.nullDevice
            dwebp.standardOutput = FileHandle.nullDevice
            try dwebp.run()
            dwebp.waitUntilExit()
            XCTAssertEqual(dwebp.terminationStatus, 0, "dwebp cannot read the quality-\(quality) output")
            let read = try NetpbmReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/q.ppm"))))
            XCTAssertEqual([read.width, read.height], [32, 32])
        }
        XCTAssertLessThan(sizes[0], sizes[1], "quality 20 was not smaller than 90: \(sizes)")
    }

    func testAnImageWiderThanWebPAllowsFailsAsTooLarge() throws {
        let bytes = try Fixtures.png([UInt8](repeating: 128, count: 16384), width: 16384, height: 1,
                                     options: Fixtures.pngOptions(colorType: 0, bitDepth: 8))
        let (result, _) = try convert(bytes, .png, to: .webp)
        XCTAssertEqual(result, .failure(DownloadError(.tooLarge, "WebP holds at most 16383×16383 pixels; this image would be "
            + "16384×1 (--resize makes it smaller)")))
        let (resized, _) = try convert(bytes, .png, to: .webp, resize: Resize(size: 16383))
        XCTAssertNoThrow(try resized.get())
    }

    func testTheOutputKindNamesTheQuality() {
        var configuration = DownloaderConfiguration(outputDirectory: ".")
        configuration.saveAs = .pixels(.webp)
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "webp@q90")
        configuration.quality = 75
        configuration.resize = Resize(size: 256, fit: .pad, upscale: true, padColor: Resize.Color(red: 255, green: 255, blue: 255))
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "webp@q75:256:pad:upscale:ffffff")
    }
}
