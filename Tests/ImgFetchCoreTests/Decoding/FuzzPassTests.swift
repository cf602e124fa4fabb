import CImageCodec
import CImageCodecFixtures
import Glibc
import XCTest
@testable import ImgFetchCore

/// The decoders' fuzz pass (issue 6): thousands of deterministic mutants of fixtures of every format, each
/// verified and converted (see FuzzPass). A crash fails the run; every call must return a success
/// or a one-line `DownloadError` about the data; verification and conversion must agree; nothing
/// may be left in the scratch directory; and decoding the same inputs again must neither change an
/// outcome nor grow memory. Longer runs: `Scripts/fuzz`. IMGFETCH_FUZZ_INPUTS and
/// IMGFETCH_FUZZ_SEED change the count and the seed.
final class FuzzPassTests: CodecTestCase {
    private let environment = ProcessInfo.processInfo.environment
    private var seed: UInt64 { environment["IMGFETCH_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x1A6F_E7C4 }

    private func fixtures() throws -> [FuzzPass.Fixture] {
        let (width, height) = (24, 17)
        func jpeg(_ options: imgcodec_test_jpeg_options, channels: Int = 3) throws -> [UInt8] {
            try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: channels), width: width, height: height, options: options)
        }
        var palette = PNGSample(.palette, bitDepth: 4, width: width, height: height)
        palette.paletteAlpha = [0, 64, 128, 255, 9]
        var interlaced = PNGSample(.rgba, bitDepth: 16, width: width, height: height)
        interlaced.interlaced = true
        let cmyk = Fixtures.jpegOptions(progressive: true, colorSpace: Int32(IMGCODEC_TEST_JPEG_CMYK))
        return [
            FuzzPass.Fixture(name: "baseline JPEG, orientation 6", format: .jpeg, bytes: try jpeg(Fixtures.jpegOptions(orientation: 6))),
            FuzzPass.Fixture(name: "progressive JPEG", format: .jpeg, bytes: try jpeg(Fixtures.jpegOptions(progressive: true))),
            FuzzPass.Fixture(name: "arithmetic JPEG", format: .jpeg, bytes: try jpeg(Fixtures.jpegOptions(arithmetic: true))),
            FuzzPass.Fixture(name: "progressive CMYK JPEG", format: .jpeg, bytes: try jpeg(cmyk, channels: 4)),
            FuzzPass.Fixture(name: "RGB PNG, orientation 8", format: .png,
                             bytes: try PNGSample(.rgb, bitDepth: 8, width: width, height: height).encoded(orientation: 8)),
            FuzzPass.Fixture(name: "palette PNG with tRNS", format: .png, bytes: try palette.encoded(textChunks: 2)),
            FuzzPass.Fixture(name: "interlaced RGBA PNG", format: .png, bytes: try interlaced.encoded()),
            FuzzPass.Fixture(name: "lossy WebP with alpha", format: .webp,
                             bytes: try WebPFixture.still(Fixtures.gradient(width: width, height: height, channels: 4), width: width,
                                                          height: height, alpha: true)),
            FuzzPass.Fixture(name: "lossless WebP animation", format: .webp,
                             bytes: try WebPFixture.animation(width: width, height: height, frames: 2, lossless: true)),
            FuzzPass.Fixture(name: "interlaced GIF, two frames", format: .gif, bytes: try {
                var gif = GIFFixture.still(width: width, height: height, colors: 16, interlaced: true)
                gif.frames.append(GIFFixture.Frame(left: 3, top: 2, width: 5, height: 4, indices: [UInt8](repeating: 3, count: 20),
                                                   transparentIndex: 3))
                return try gif.encoded()
            }()),
            FuzzPass.Fixture(name: "LZW TIFF, two pages", format: .tiff, bytes: try {
                var tiff = TIFFFixture(width: width, height: height, samples: 4, bits: 8, photometric: 2, extraSamples: 2)
                (tiff.options.compression, tiff.options.rows_per_strip, tiff.options.pages) = (5, 5, 2)
                return try tiff.encoded()
            }()),
            FuzzPass.Fixture(name: "lossy 10-bit AVIF with alpha", format: .avif, bytes: try {
                var avif = AVIFFixture(width: width, height: height, channels: 4, bitDepth: 10, yuv: Int32(IMGCODEC_TEST_AVIF_YUV420),
                                       lossless: false)
                avif.options.quantizer = 30
                return try avif.encoded()
            }()),
            FuzzPass.Fixture(name: "RLE8 BMP", format: .bmp,
                             bytes: try BMPFixture(width: width, height: height, bits: 8, compression: Int32(IMGCODEC_TEST_BMP_RLE8)).encoded()),
            FuzzPass.Fixture(name: "32-bit BMP with alpha", format: .bmp, bytes: try {
                var bmp = BMPFixture(width: width, height: height, bits: 32, header: 124, topDown: true,
                                     compression: Int32(IMGCODEC_TEST_BMP_BITFIELDS))
                (bmp.options.red_mask, bmp.options.green_mask, bmp.options.blue_mask, bmp.options.alpha_mask) = (0xFF0000, 0xFF00, 0xFF, 0xFF00_0000)
                return try bmp.encoded()
            }()),
        ]
    }

    /// Seconds of CPU (user and system) this process has used.
    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    func testMutatedFixturesNeverCrashAndFailCleanly() throws {
        let count = environment["IMGFETCH_FUZZ_INPUTS"].flatMap { Int($0) } ?? 16_000
        let pass = FuzzPass(fixtures: try fixtures(), seed: seed, directory: directory)
        let (start, cpuStart) = (DispatchTime.now().uptimeNanoseconds, cpuSeconds())
        let (outcomes, problems) = pass.run(0..<count)
        let (seconds, cpu) = (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, cpuSeconds() - cpuStart)
        let accepted = outcomes.filter { $0.verified.error == nil }.count
        print("fuzz pass: \(count) inputs (seed \(seed)) in \(String(format: "%.1f", seconds)) s, "
            + "\(String(format: "%.1f", cpu)) s of CPU; \(accepted) still decode, \(problems.count) problems")
        // CPU time rather than wall time: other work on the machine must not fail the test. Under a
        // minute of CPU means under a minute on two cores even with one of them busy elsewhere.
        XCTAssertLessThan(cpu, 60, "the fuzz pass took \(cpu) s of CPU")
        for problem in problems.prefix(20) { XCTFail(problem) }
        XCTAssertEqual(outcomes.count, count, "every call returned")
        XCTAssertGreaterThan(accepted, 0, "some mutants still decode")
        XCTAssertLessThan(accepted, count / 2, "most mutants are refused")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory)).subtracting(FuzzPass.ownFiles())
        XCTAssertEqual(left, [], "scratch files left behind")
    }

    func testDecodingTheSameInputsAgainDoesNotGrowMemory() throws {
        let pass = FuzzPass(fixtures: try fixtures(), seed: seed &+ 1, directory: directory)
        let first = pass.run(0..<500)
        let afterFirst = imgcodec_test_heap_in_use()
        let second = pass.run(0..<500)
        let growth = Int(imgcodec_test_heap_in_use()) - Int(afterFirst)
        print("fuzz leak check: heap in use after the first pass \(afterFirst >> 20) MiB, growth over the second \(growth >> 10) KiB")
        for problem in (first.problems + second.problems).prefix(20) { XCTFail(problem) }
        XCTAssertTrue(first.outcomes == second.outcomes, "the same inputs gave different outcomes")
        // AddressSanitizer replaces malloc (mallinfo2 then says nothing); there its LeakSanitizer
        // does this check, exactly.
        if !Self.underAddressSanitizer {
            XCTAssertLessThan(growth, 4 << 20, "the heap grew by \(growth >> 10) KiB over 500 inputs already seen")
        }
    }

    /// Whether the AddressSanitizer runtime is linked in (`swift build --sanitize=address`).
    private static let underAddressSanitizer = dlsym(dlopen(nil, RTLD_NOW), "__asan_init") != nil
}
