import Glibc
import XCTest
@testable import ImgFetchCore

/// What one hostile input cost: wall time, and how far the process's peak RSS rose above the RSS
/// before it. The peak mark is reset first through /proc/self/clear_refs, so that it belongs to the
/// code under test, and read from VmHWM: `getrusage`'s `ru_maxrss` never drops below the peak of the
/// process image replaced by exec (here the forked `swift test`, some 80 MiB). Where the mark
/// cannot be reset, growth is the rise of `ru_maxrss`, which shows only past the earlier peak.
struct HostileCost: CustomStringConvertible {
    var seconds: Double
    var peakGrowth: Int
    var peakWasReset: Bool

    var description: String {
        let mebibytes = Double(peakGrowth) / Double(1 << 20)
        return "\(Self.format(seconds, digits: 3)) s, peak RSS +\(Self.format(mebibytes, digits: 1)) MiB" + (peakWasReset ? "" : " (peak not resettable)")
    }

    /// Runs `body` once and measures it.
    static func measure<T>(_ body: () throws -> T) rethrows -> (T, HostileCost) {
        // Freed heap pages still count as resident, and malloc would hand them out again unseen.
        _ = trimHeap?(0)
        let reset = resetPeak()
        let before = reset ? status("VmRSS") : maxRSS()
        let start = DispatchTime.now().uptimeNanoseconds
        let value = try body()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let peak = reset ? status("VmHWM") : maxRSS()
        return (value, HostileCost(seconds: seconds, peakGrowth: max(0, peak - before), peakWasReset: reset))
    }

    /// glibc's malloc_trim, which returns free heap memory to the kernel (malloc.h is not in the Glibc module).
    private static let trimHeap = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
    }

    /// Process-wide peak RSS in bytes, from `getrusage`.
    static func maxRSS() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// Bytes of a /proc/self/status field given in kB (VmRSS: now, VmHWM: peak since the last reset).
    static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kilobytes * 1024
    }

    /// Resets the kernel's peak-RSS mark to the current RSS; false where /proc does not allow it.
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return Glibc.write(fd, "5", 1) == 1
    }

    private static func format(_ value: Double, digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }
}

extension XCTestCase {
    /// Runs `body`, prints what it cost (for the record), and fails when it took `seconds` or more
    /// or raised the peak RSS by `megabytes` MiB or more.
    @discardableResult
    func assertBounded<T>(_ label: String, seconds: Double = 3, megabytes: Int = 16, file: StaticString = #filePath, line: UInt = #line,
                          _ body: () throws -> T) rethrows -> T {
        let (value, cost) = try HostileCost.measure(body)
        print("cost: \(label): \(cost)")
        XCTAssertLessThan(cost.seconds, seconds, "\(label) took \(cost)", file: file, line: line)
        XCTAssertLessThan(cost.peakGrowth, megabytes << 20, "\(label) cost \(cost)", file: file, line: line)
        return value
    }
}

extension CodecTestCase {
    /// Verifies the file at `path` within the cost bounds of `assertBounded`.
    func verifyBounded(path: String, _ format: ImageFormat, limits: DecodeLimits = DecodeLimits(), _ label: String,
                       seconds: Double = 3, megabytes: Int = 16,
                       file: StaticString = #filePath, line: UInt = #line) -> Result<ImageInfo, DownloadError> {
        assertBounded("verify " + label, seconds: seconds, megabytes: megabytes, file: file, line: line) {
            ImageCodec.verify(path: path, format: format, limits: limits)
        }
    }

    /// Writes `bytes` to a file, then verifies it within the cost bounds (writing is not measured).
    func verifyBounded(_ bytes: [UInt8], _ format: ImageFormat, limits: DecodeLimits = DecodeLimits(), _ label: String,
                       seconds: Double = 3, megabytes: Int = 16,
                       file: StaticString = #filePath, line: UInt = #line) throws -> Result<ImageInfo, DownloadError> {
        let path = try write(bytes, name: "hostile.\(format.rawValue)")
        return verifyBounded(path: path, format, limits: limits, label, seconds: seconds, megabytes: megabytes, file: file, line: line)
    }

    /// Converts the file at `path` to `pixelFormat` within the cost bounds; returns the result and
    /// the size of what was written.
    func convertBounded(path: String, _ format: ImageFormat, to pixelFormat: PixelFormat = .ppm, limits: DecodeLimits = DecodeLimits(),
                        memoryBudget: Int = ImageCodec.defaultPixelMemory, _ label: String, seconds: Double = 3, megabytes: Int = 16,
                        file: StaticString = #filePath, line: UInt = #line) -> (Result<ConvertedImage, DownloadError>, written: Int) {
        let outputPath = directory + "/hostile-output.\(pixelFormat.rawValue)"
        let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, file: file, line: line)
        defer {
            close(fd)
            unlink(outputPath)
        }
        let result = assertBounded("convert " + label, seconds: seconds, megabytes: megabytes, file: file, line: line) {
            ImageCodec.convert(path: path, format: format, to: pixelFormat, limits: limits, output: fd,
                               scratchDirectory: directory, memoryBudget: memoryBudget)
        }
        var info = stat()
        fstat(fd, &info)
        return (result, Int(info.st_size))
    }

    /// `convertBounded(path:…)` for bytes written to a file first.
    func convertBounded(_ bytes: [UInt8], _ format: ImageFormat, to pixelFormat: PixelFormat = .ppm, limits: DecodeLimits = DecodeLimits(),
                        memoryBudget: Int = ImageCodec.defaultPixelMemory, _ label: String, seconds: Double = 3, megabytes: Int = 16,
                        file: StaticString = #filePath, line: UInt = #line) throws -> (Result<ConvertedImage, DownloadError>, written: Int) {
        let path = try write(bytes, name: "hostile.\(format.rawValue)")
        return convertBounded(path: path, format, to: pixelFormat, limits: limits, memoryBudget: memoryBudget, label,
                              seconds: seconds, megabytes: megabytes, file: file, line: line)
    }
}
