import CImageCodec
import CImageCodecFixtures
import Glibc
import XCTest
@testable import ImgFetchCore

/// Converting a huge JPEG must not hold its bitmap: peak RSS growth stays far below the bitmap size.
final class CodecMemoryTests: CodecTestCase {
    /// Bytes of a `/proc/self/status` field given in kB.
    private func status(_ field: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kilobytes = try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }

    /// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS, so the next peak belongs to the
    /// code under test rather than to whatever ran earlier in this process.
    private func resetPeak() throws {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { throw XCTSkip("/proc/self/clear_refs is not writable here") }
        defer { close(fd) }
        guard Glibc.write(fd, "5", 1) == 1 else { throw XCTSkip("resetting VmHWM is not supported here") }
    }

    /// Converts a side × side pattern JPEG to PPM and returns the process's peak RSS during the
    /// conversion and its growth over the RSS before it, in bytes.
    private func peakRSS(side: Int, orientation: Int32) throws -> (peak: Int, growth: Int) {
        let source = directory + "/huge.jpg"
        try Fixtures.writePatternJPEG(to: source, width: side, height: side, orientation: orientation)
        let outputPath = directory + "/huge.ppm"
        let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer {
            close(fd)
            unlink(outputPath)
            unlink(source)
        }
        try resetPeak()
        let before = try status("VmRSS")
        let result = ImageCodec.convert(path: source, format: .jpeg, to: .ppm, output: fd, scratchDirectory: directory)
        let peak = try status("VmHWM")
        XCTAssertEqual(try result.get().width, side)
        var info = stat()
        XCTAssertEqual(fstat(fd, &info), 0)
        XCTAssertEqual(Int(info.st_size), "P6\n\(side) \(side)\n255\n".utf8.count + side * side * 3)
        return (peak, peak - before)
    }

    func testLargeJPEGToPPMStreams() throws {
        // A 6000 × 6000 bitmap is 103 MiB; the conversion itself needs a few row buffers.
        let growth = try peakRSS(side: 6000, orientation: 1).growth
        XCTAssertLessThan(growth, 24 << 20, "peak RSS grew by \(growth >> 20) MiB")
    }

    func testLargeRotatedJPEGUsesADiskRaster() throws {
        // Rotation needs the whole image: it goes to a scratch file and comes back in 8 MiB column bands.
        let growth = try peakRSS(side: 6000, orientation: 6).growth
        XCTAssertLessThan(growth, 32 << 20, "peak RSS grew by \(growth >> 20) MiB")
    }

    func testTenThousandSquareJPEGToPPM() throws {
        // The acceptance case; slow in debug builds, so opt-in: IMGFETCH_HUGE_IMAGE_TEST=1.
        guard ProcessInfo.processInfo.environment["IMGFETCH_HUGE_IMAGE_TEST"] == "1" else {
            throw XCTSkip("set IMGFETCH_HUGE_IMAGE_TEST=1 to run")
        }
        for orientation: Int32 in [1, 6] {
            // The whole test process counts here, XCTest included.
            let (peak, growth) = try peakRSS(side: 10_000, orientation: orientation)
            print("10000×10000 JPEG → PPM, orientation \(orientation): peak RSS \(peak >> 20) MiB (+\(growth >> 20) MiB)")
            XCTAssertLessThan(peak, 64 << 20)
        }
    }

    /// Peak RSS growth while verifying `bytes` (from a file, as large bodies are).
    private func verifyPeakGrowth(_ bytes: [UInt8], _ format: ImageFormat) throws -> (Result<ImageInfo, DownloadError>, Int) {
        let path = directory + "/hostile.\(format.rawValue)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        try resetPeak()
        let before = try status("VmRSS")
        let result = ImageCodec.verify(path: path, format: format)
        return (result, try status("VmHWM") - before)
    }

    func testHostileFilesOfEveryFormatVerifyInBoundedMemory() throws {
        // Small files that decode to many megapixels or many frames: verifying streams them.
        var gifBomb = GIFFixture.still(width: 4, height: 4, colors: 2)
        (gifBomb.screenWidth, gifBomb.screenHeight, gifBomb.frames[0].declared) = (8000, 8000, (8000, 8000))
        var gifFrames = GIFFixture.still(width: 1, height: 1, colors: 2)
        gifFrames.repeatLastFrame = 99_999
        var rle = BMPFixture(width: 1, height: 1, bits: 8, compression: Int32(IMGCODEC_TEST_BMP_RLE8))
        (rle.width, rle.height, rle.pixels) = (4000, 4000, [UInt8](repeating: 0, count: 4000 * 4000))
        rle.options.rle_skips = 1
        var tiffOptions = imgcodec_test_tiff_options()
        (tiffOptions.samples, tiffOptions.bits, tiffOptions.photometric, tiffOptions.compression, tiffOptions.rows_per_strip) = (1, 8, 1, 8, 4000)
        let tiff = try Fixtures.collect { data, size, message, messageSize in
            imgcodec_test_encode_tiff(nil, 4000, 4000, &tiffOptions, data, size, message, messageSize)
        }
        var manyPages = TIFFFixture(width: 1, height: 1, samples: 1, bits: 8, photometric: 1)
        manyPages.options.pages = 20_000
        var avifFrames = AVIFFixture(width: 8, height: 8, channels: 3)
        avifFrames.options.claimed_frames = 100_000
        let cases: [(String, [UInt8], ImageFormat, Bool)] = [
            ("GIF claiming 8000×8000 with 4×4 of data", try gifBomb.encoded(), .gif, false),
            ("GIF of 100,000 frames", try gifFrames.encoded(), .gif, false),
            ("RLE8 BMP of 4000×4000", try rle.encoded(), .bmp, true),
            ("one-strip deflate TIFF of 4000×4000", tiff, .tiff, true),
            ("TIFF of 20,000 pages", try manyPages.encoded(), .tiff, false),
            ("WebP of 100,000 frames", try WebPFixture.built(canvas: (1, 1), frame: (1, 1), count: 100_000), .webp, false),
            ("AVIF claiming 100,000 frames", try avifFrames.encoded(), .avif, false),
        ]
        for (label, bytes, format, valid) in cases {
            let (result, growth) = try verifyPeakGrowth(bytes, format)
            XCTAssertEqual(result.error == nil, valid, "\(label): \(result)")
            // 16 megapixels of 8-bit samples would be 16 MiB: none of them is held.
            XCTAssertLessThan(growth, 12 << 20, "\(label): peak RSS grew by \(growth >> 20) MiB")
        }
    }
}
