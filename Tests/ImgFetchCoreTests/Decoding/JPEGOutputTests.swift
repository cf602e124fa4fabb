import XCTest
@testable import ImgFetchCore

/// `--save-as jpeg`: every source layout becomes an 8-bit gray or RGB JPEG, alpha composited onto
/// black, decoded back within a PSNR floor.
final class JPEGOutputTests: CodecTestCase {
    /// At the default quality (95) a smooth picture comes back well above this; the floor leaves room
    /// for libjpeg-turbo versions, not for a wrong channel order or a missing composite.
    static let psnrFloor = 35.0

    /// The 8-bit gray or RGB pixels a JPEG of `image` should hold: 16-bit samples rounded to 8,
    /// alpha composited onto black.
    private func expectedJPEGPixels(_ image: Image) -> (channels: Int, samples: [Int]) {
        let samples = image.samples.map { image.bitDepth == 16 ? ($0 * 255 + 32767) / 65535 : $0 }
        let hasAlpha = image.channels == 2 || image.channels == 4
        guard hasAlpha else { return (image.channels, samples) }
        let color = image.channels - 1
        var out: [Int] = []
        for pixel in stride(from: 0, to: samples.count, by: image.channels) {
            let alpha = samples[pixel + color]
            for channel in 0..<color { out.append((samples[pixel + channel] * alpha + 127) / 255) }
        }
        return (color, out)
    }

    private func psnr(_ a: [Int], _ b: [Int]) -> Double {
        let squared = zip(a, b).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) } / Double(max(1, a.count))
        return squared == 0 ? .infinity : 10 * log10(255 * 255 / squared)
    }

    /// A smooth gradient (photographs are smooth; noise is what JPEG is worst at).
    private func gradient(_ colorType: PNGSample.ColorType, bitDepth: Int) -> PNGSample {
        var sample = PNGSample(colorType, bitDepth: bitDepth, width: 64, height: 48)
        let channels = colorType.samplesPerPixel
        var rows: [UInt8] = []
        for y in 0..<sample.height {
            for x in 0..<sample.width {
                for channel in 0..<channels {
                    // Each channel a different slow ramp; 0...1.
                    let value = (Double(x) / 63 * Double(channel + 1) + Double(y) / 47 * Double(channels - channel)) / Double(channels + 1)
                    if bitDepth == 16 {
                        let wide = Int(value * 65535)
                        rows += [UInt8(wide >> 8), UInt8(wide & 0xFF)]
                    } else {
                        rows.append(UInt8(value * 255))
                    }
                }
            }
        }
        sample.rows = rows
        if colorType == .palette {
            // Entry i a gray-ish ramp, so that neighbouring indices are neighbouring colors.
            sample.palette = (0..<256).flatMap { [UInt8($0), UInt8(255 - $0), UInt8($0 / 2)] }
        }
        return sample
    }

    func testEveryLayoutBecomesGrayOrRGBWithinThePSNRFloor() throws {
        for (colorType, depth) in [(PNGSample.ColorType.gray, 8), (.gray, 16), (.grayAlpha, 8), (.grayAlpha, 16), (.rgb, 8), (.rgb, 16),
                                   (.rgba, 8), (.rgba, 16), (.palette, 8)] {
            let sample = gradient(colorType, bitDepth: depth)
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
        let source = try gradient(.rgb, bitDepth: 8).encoded()
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
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "jpeg@q95")
        configuration.quality = 80
        configuration.resize = Resize(size: 256)
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "jpeg@q80:256")
        configuration.saveAs = .pixels(.png)
        XCTAssertEqual(CacheEntry.outputKind(for: configuration), "png:256", "lossless kinds are as before")
    }
}
