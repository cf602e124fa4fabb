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
}
