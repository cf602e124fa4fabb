import Glibc
import XCTest
@testable import ImgFetchCore

/// Base for codec tests: a private temp directory, fixture files in it, and readers for the outputs.
class CodecTestCase: XCTestCase {
    private var scratch: ScratchDirectory!
    var directory: String { scratch.path }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "imgfetch-codec")
    }

    override func tearDown() {
        scratch.remove()
    }

    /// Writes `bytes` to a new file in the temp directory and returns its path.
    func write(_ bytes: [UInt8], name: String = "image") throws -> String {
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Verifies `bytes` from a file and from memory (how small bodies are decoded); both must agree.
    func verify(_ bytes: [UInt8], _ format: ImageFormat, limits: DecodeLimits = DecodeLimits(),
                file: StaticString = #filePath, line: UInt = #line) throws -> Result<ImageInfo, DownloadError> {
        let fromFile = ImageCodec.verify(path: try write(bytes, name: "verify.\(format.rawValue)"), format: format, limits: limits)
        let fromMemory = bytes.withUnsafeBytes { ImageCodec.verify(.memory($0), format: format, limits: limits) }
        XCTAssertEqual(fromMemory, fromFile, "decoding from memory and from the file disagree", file: file, line: line)
        return fromFile
    }

    /// Asserts that verifying `bytes` fails with exactly `message` (and `kind`).
    func assertRejected(_ bytes: [UInt8], _ format: ImageFormat, _ message: String, kind: DownloadError.Kind = .notAnImage,
                        limits: DecodeLimits = DecodeLimits(), file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try verify(bytes, format, limits: limits, file: file, line: line)
        XCTAssertEqual(result, .failure(DownloadError(kind, message)), file: file, line: line)
    }

    /// Asserts that every cut of `bytes` (at `count` offsets spread over the file, the first bytes
    /// and the last ones included) fails to verify and to convert, with a message starting with
    /// one of `prefixes`: a truncated file is never taken for a whole one.
    /// `optionalTail` bytes at the end may be missing without harm (an RLE end-of-bitmap code).
    func assertTruncationsFail(_ bytes: [UInt8], _ format: ImageFormat, prefixes: [String], count: Int = 24, optionalTail: Int = 0,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let end = bytes.count - optionalTail
        var offsets = Set((0..<count).map { $0 * end / count })
        offsets.formUnion([1, 2, 3, 8, 12, 16, 30, end - 1, end - 2, end - 8].filter { $0 > 0 && $0 < end })
        for offset in offsets.sorted() {
            let cut = Array(bytes.prefix(offset))
            let verified = try verify(cut, format, file: file, line: line)
            guard case .failure(let error) = verified else {
                XCTFail("\(format) cut at \(offset) of \(bytes.count) bytes verified", file: file, line: line)
                continue
            }
            XCTAssertTrue(prefixes.contains { error.message.hasPrefix($0) }, "cut at \(offset): \(error.message)", file: file, line: line)
            XCTAssertFalse(error.message.contains("\n"), file: file, line: line)
            let (converted, _) = try convert(cut, format, to: .pam)
            XCTAssertEqual(converted.error, error, "cut at \(offset): verify and convert disagree", file: file, line: line)
        }
    }

    /// Converts `bytes` and returns the result with the output file's bytes.
    func convert(_ bytes: [UInt8], _ format: ImageFormat, to pixelFormat: PixelFormat, maxDimension: Int? = nil,
                 resize: Resize? = nil, limits: DecodeLimits = DecodeLimits(),
                 memoryBudget: Int = ImageCodec.defaultPixelMemory) throws -> (Result<ConvertedImage, DownloadError>, [UInt8]) {
        let input = try write(bytes, name: "source.\(format.rawValue)")
        let outputPath = directory + "/output.\(pixelFormat.rawValue)"
        let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { unlink(outputPath) }
        let result = ImageCodec.convert(path: input, format: format, to: pixelFormat, resize: resize ?? maxDimension.map { Resize(size: $0) }, limits: limits,
                                        output: fd, scratchDirectory: directory, memoryBudget: memoryBudget)
        close(fd)
        let output = try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputPath)))
        return (result, output)
    }

    /// Converts and decodes the output back to pixels; fails the test if the conversion fails.
    func convertedImage(_ bytes: [UInt8], _ format: ImageFormat, to pixelFormat: PixelFormat, maxDimension: Int? = nil,
                        resize: Resize? = nil,
                        memoryBudget: Int = ImageCodec.defaultPixelMemory,
                        file: StaticString = #filePath, line: UInt = #line) throws -> (ConvertedImage, Image) {
        let (result, output) = try convert(bytes, format, to: pixelFormat, maxDimension: maxDimension, resize: resize, memoryBudget: memoryBudget)
        let converted = try result.get()
        let image = try decodeOutput(output, pixelFormat)
        XCTAssertEqual(image.width, converted.width, file: file, line: line)
        XCTAssertEqual(image.height, converted.height, file: file, line: line)
        XCTAssertEqual(image.channels, converted.channels, file: file, line: line)
        XCTAssertEqual(image.bitDepth, converted.bitDepth, file: file, line: line)
        return (converted, image)
    }

    /// Pixels of a converted output.
    func decodeOutput(_ bytes: [UInt8], _ pixelFormat: PixelFormat) throws -> Image {
        switch pixelFormat {
        case .png: try decodePNG(bytes)
        case .jpeg: try decodePNG(bytes, format: .jpeg)
        case .webp: try decodePNG(bytes, format: .webp)
        case .ppm, .pam: try NetpbmReader.read(bytes)
        }
    }

    /// Decodes a PNG (or another format the codec reads) to rows of its own layout with the codec's own row reader.
    func decodePNG(_ bytes: [UInt8], format: ImageFormat = .png) throws -> Image {
        let decoder = try ImageDecoder(path: try write(bytes, name: "readback.\(format.fileExtension)"), format: format, limits: DecodeLimits())
        try decoder.start()
        let out = decoder.output
        let rowBytes = out.rowBytes
        var pixels = [UInt8](repeating: 0, count: rowBytes * out.height)
        for pass in 0..<out.passes {
            for y in 0..<out.height {
                if out.passes > 1 && !decoder.rowInPass(y, pass: pass) {
                    var scratch = [UInt8](repeating: 0, count: max(1, rowBytes))
                    try scratch.withUnsafeMutableBufferPointer { buffer throws in try decoder.readRow(into: buffer.baseAddress!) }
                    continue
                }
                try pixels.withUnsafeMutableBufferPointer { buffer throws in try decoder.readRow(into: buffer.baseAddress! + y * rowBytes) }
            }
        }
        try decoder.finish()
        return Image(width: out.width, height: out.height, channels: out.channels, pixels: pixels, bitDepth: out.layout.bitDepth)
    }
}
