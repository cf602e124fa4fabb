import Foundation
import Glibc
@testable import ImgFetchCore

/// A deterministic fuzz pass over the codec: input `index` is a mutant of fixture `index % count`,
/// regenerated from the seed alone, verified and then converted with settings that rotate by index.
/// Runs on two workers (the machine's two cores), each with its own files; checks are collected as
/// messages so that XCTest is only called from the test's thread.
struct FuzzPass: Sendable {
    struct Fixture: Sendable {
        var name: String
        var format: ImageFormat
        var bytes: [UInt8]
    }

    /// What one input came to, comparable between runs.
    struct Outcome: Equatable, Sendable {
        var verified: Result<ImageInfo, DownloadError>
        var converted: Result<ConvertedImage, DownloadError>
    }

    static let limits = DecodeLimits(maxPixels: 4_000_000, maxMemory: 64 << 20)
    static let workers = 2

    var fixtures: [Fixture]
    var seed: UInt64
    var directory: String

    /// Outcomes of inputs `range`, in order, and every broken expectation.
    func run(_ range: Range<Int>) -> (outcomes: [Outcome], problems: [String]) {
        let results = ResultBox(count: range.count)
        DispatchQueue.concurrentPerform(iterations: Self.workers) { worker in
            let outputPath = directory + "/fuzz-output-\(worker)"
            let output = open(outputPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            defer { close(output) }
            for index in stride(from: range.lowerBound + worker, to: range.upperBound, by: Self.workers) {
                let (outcome, problems) = input(index, worker: worker, output: output)
                results.store(outcome, problems, at: index - range.lowerBound)
            }
        }
        return results.take()
    }

    /// Names of the files the pass leaves in `directory` by design (the inputs and outputs it reuses).
    static func ownFiles() -> Set<String> {
        Set((0..<workers).flatMap { worker in ImageFormat.allCases.map { "fuzz-\(worker).\($0.rawValue)" } + ["fuzz-output-\(worker)"] })
    }

    /// How the mutator sees a format: JPEG segments, PNG chunks, or slices after a header whose size fields it knows.
    static func container(_ format: ImageFormat) -> FuzzMutator.Container {
        switch format {
        case .jpeg: .jpeg
        case .png: .png
        case .gif: .other(header: 13, sizeOffsets: [6, 8], wide: false)
        case .webp: .other(header: 30, sizeOffsets: [26, 28], wide: false)
        case .bmp: .other(header: 54, sizeOffsets: [18, 22], wide: true)
        default: .other(header: 16, sizeOffsets: [], wide: false)
        }
    }

    private func input(_ index: Int, worker: Int, output: Int32) -> (Outcome, [String]) {
        var rng = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        let fixture = fixtures[index % fixtures.count]
        let (bytes, steps) = FuzzMutator(container: Self.container(fixture.format)).mutate(fixture.bytes, using: &rng)
        let label = "input \(index) (seed \(seed)): \(fixture.name), \(steps.joined(separator: ", "))"
        var problems: [String] = []
        let path = directory + "/fuzz-\(worker).\(fixture.format.rawValue)"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            return (Outcome(verified: .failure(DownloadError(.filesystem, "")), converted: .failure(DownloadError(.filesystem, ""))),
                    ["\(label): cannot write \(path)"])
        }
        let verified = ImageCodec.verify(path: path, format: fixture.format, limits: Self.limits)

        let pixelFormat: PixelFormat = [.ppm, .ppm, .pam, .png][index % 4]
        let maxDimension = [nil, nil, 9, 30][index / 4 % 4]
        let memoryBudget = index / 16 % 2 == 0 ? ImageCodec.defaultPixelMemory : 0  // 0: every raster on disk
        if ftruncate(output, 0) != 0 || lseek(output, 0, SEEK_SET) != 0 { problems.append("\(label): cannot reset the output") }
        let converted = ImageCodec.convert(path: path, format: fixture.format, to: pixelFormat, resize: maxDimension.map { Resize(size: $0) },
                                           limits: Self.limits, output: output, scratchDirectory: directory, memoryBudget: memoryBudget)
        for error in [verified.error, converted.error].compactMap({ $0 }) {
            if ![.notAnImage, .truncated, .tooLarge].contains(error.kind) { problems.append("\(label): \(error.kind): \(error.message)") }
            let prefixes = ["JPEG", "PNG", "WebP", "GIF", "AVIF", "TIFF", "BMP"].map { "invalid \($0): " } + ["image too large: ", "unsupported: "]
            if !prefixes.contains(where: { error.message.hasPrefix($0) })
                || error.message.contains("\n") || error.message.contains("\r") {
                problems.append("\(label): message \(error.message.debugDescription)")
            }
        }
        // JPEG DCT scaling decodes another way, so only unscaled conversions must agree with verify.
        // Images a library reads but cannot convert (TIFF's float samples, AVIF's unusual matrix
        // coefficients) verify, and fail only a conversion, as "unsupported: …"; so do images whose
        // conversion (a raster held whole) needs more than the memory limit that their verification fits.
        let unconvertible = converted.error?.message.hasPrefix("unsupported: ") == true
            || converted.error?.message.contains("over --max-decode-memory") == true
        if (maxDimension == nil || fixture.format != .jpeg) && !unconvertible && verified.error != converted.error {
            problems.append("\(label): verify \(verified) but convert \(converted)")
        }
        if pixelFormat == .ppm, case .success(let image) = converted {
            var info = stat()
            let maxval = image.bitDepth == 16 ? 65535 : 255
            let expected = "P6\n\(image.width) \(image.height)\n\(maxval)\n".utf8.count + image.width * image.height * 3 * (maxval == 255 ? 1 : 2)
            if fstat(output, &info) != 0 || Int(info.st_size) != expected {
                problems.append("\(label): PPM of \(info.st_size) bytes, expected \(expected)")
            }
        }
        return (Outcome(verified: verified, converted: converted), problems)
    }
}

/// The workers' results, filled in by index. Its own lock (an NSLock) guards every access.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [FuzzPass.Outcome?]
    private var problems: [String] = []

    init(count: Int) {
        outcomes = Array(repeating: nil, count: count)
    }

    func store(_ outcome: FuzzPass.Outcome, _ newProblems: [String], at index: Int) {
        lock.lock()
        defer { lock.unlock() }
        outcomes[index] = outcome
        problems += newProblems
    }

    func take() -> (outcomes: [FuzzPass.Outcome], problems: [String]) {
        lock.lock()
        defer { lock.unlock() }
        return (outcomes.compactMap { $0 }, problems)
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
