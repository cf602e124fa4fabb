import CImageCodec
import Glibc
import XCTest
@testable import ImgFetchCore

/// Thumbnails for `--gallery`: the `--max-dimension` path (orientation, DCT scaling, box filter)
/// to 8-bit JPEGs (PNGs with alpha) that fit 256 px, named by the file's SHA-256, reused, written
/// atomically.
final class ThumbnailerTests: CodecTestCase {
    private var thumbs: String { directory + "/.imgfetch/thumbs" }

    private func thumbnailer() throws -> Thumbnailer {
        try Thumbnailer(directory: thumbs)
    }

    /// The SHA-256 of the file at `path`, from a tool outside imgfetch.
    private func sha256(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    private func stamp(_ path: String) -> [Int] {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        return [Int(info.st_ino), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
    }

    /// A thumbnail's pixels, through the codec's own row reader.
    private func decode(_ thumbnail: Thumbnail) throws -> Image {
        let format: ImageFormat = thumbnail.path.hasSuffix(".png") ? .png : .jpeg
        let decoder = try ImageDecoder(path: thumbnail.path, format: format, limits: DecodeLimits())
        try decoder.start()
        let out = decoder.output
        var pixels = [UInt8](repeating: 0, count: out.rowBytes * out.height)
        for y in 0..<out.height {
            try pixels.withUnsafeMutableBufferPointer { buffer throws in try decoder.readRow(into: buffer.baseAddress! + y * out.rowBytes) }
        }
        try decoder.finish()
        return Image(width: out.width, height: out.height, channels: out.channels, pixels: pixels, bitDepth: out.layout.bitDepth)
    }

    /// Names in the thumbnail directory, sorted.
    private func thumbnailFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: thumbs)) ?? []).sorted()
    }

    func testRotatedJPEGFitsWithItsOrientationApplied() throws {
        let width = 600, height = 300
        let jpeg = try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: 3), width: width, height: height,
                                     options: Fixtures.jpegOptions(orientation: 6))
        let path = try write(jpeg, name: "photo.jpg")
        let thumbnail = try thumbnailer().thumbnail(of: path).get()
        XCTAssertEqual(thumbnail.path, thumbs + "/" + (try sha256(path)) + ".jpg", "an opaque image gets a JPEG")
        XCTAssertEqual([thumbnail.width, thumbnail.height], [128, 256])
        XCTAssertTrue(thumbnail.isNew)
        let image = try decode(thumbnail)
        XCTAssertEqual([image.width, image.height, image.channels, image.bitDepth], [128, 256, 3, 8])
        // The pixels of `--save-as png --max-dimension 256`, within JPEG's loss.
        let (_, expected) = try convertedImage(jpeg, .jpeg, to: .png, maxDimension: 256)
        let difference = zip(image.pixels, expected.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        // Measured: 5.2 on average (the fixture's sharp checker edges ring); upside down, 63.
        XCTAssertLessThan(Double(difference) / Double(image.pixels.count), 10)
        XCTAssertEqual(thumbnailFiles(), [URL(fileURLWithPath: thumbnail.path).lastPathComponent], "no temp file is left")
    }

    func testSmallImagesKeepTheirSize() throws {
        let png = try PNGSample(.rgba, bitDepth: 8, width: 40, height: 30).encoded()
        let thumbnail = try thumbnailer().thumbnail(of: try write(png, name: "small.png")).get()
        XCTAssertEqual([thumbnail.width, thumbnail.height], [40, 30])
        XCTAssertTrue(thumbnail.path.hasSuffix(".png"), "an image with alpha gets a PNG")
        XCTAssertEqual(try decode(thumbnail), try decodePNG(png), "an image within 256 px is copied pixel for pixel")
    }

    func testSixteenBitSamplesBecomeEightBit() throws {
        let png = try PNGSample(.rgba, bitDepth: 16, width: 300, height: 20).encoded()
        let thumbnail = try thumbnailer().thumbnail(of: try write(png, name: "deep.png")).get()
        let image = try decode(thumbnail)
        let (_, wide) = try convertedImage(png, .png, to: .png, maxDimension: 256)
        XCTAssertEqual(wide.bitDepth, 16)
        XCTAssertEqual(image.bitDepth, 8)
        XCTAssertEqual([image.width, image.height], [256, 17])
        XCTAssertEqual(image.samples, wide.samples.map { ($0 * 255 + 32767) / 65535 })
    }

    func testAThumbnailThatExistsIsReused() throws {
        let path = try write(try PNGSample(.rgb, bitDepth: 8, width: 300, height: 200).encoded(), name: "a.png")
        let first = try thumbnailer().thumbnail(of: path).get()
        let before = stamp(first.path)
        usleep(20_000)
        let second = try thumbnailer().thumbnail(of: path).get()
        XCTAssertFalse(second.isNew)
        XCTAssertEqual([second.width, second.height], [256, 171])
        XCTAssertEqual(stamp(second.path), before, "the thumbnail file is not written again")
        // A known hash spares reading the file; a value that is not a hash is never used as a name.
        let hash = URL(fileURLWithPath: first.path).deletingPathExtension().lastPathComponent
        XCTAssertEqual(try thumbnailer().thumbnail(of: path, contentHash: hash).get(), second)
        XCTAssertEqual(try thumbnailer().thumbnail(of: path, contentHash: "../../evil").get(), second)
        XCTAssertEqual(thumbnailFiles().count, 1)
    }

    func testAnEmptyLeftoverIsMadeAgain() throws {
        let path = try write(try PNGSample(.gray, bitDepth: 8, width: 20, height: 20).encoded(), name: "g.png")
        let made = try thumbnailer().thumbnail(of: path).get()
        try Data().write(to: URL(fileURLWithPath: made.path))
        let again = try thumbnailer().thumbnail(of: path).get()
        XCTAssertTrue(again.isNew)
        XCTAssertEqual([again.width, again.height], [20, 20])
    }

    func testFilesWithoutAPreviewFailAndLeaveNothing() throws {
        let thumbnailer = try thumbnailer()
        let svg = try write(Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), name: "logo.svg")
        XCTAssertEqual(thumbnailer.thumbnail(of: svg).failure?.kind, .unverified)
        let text = try write(Array("hello".utf8), name: "notes.txt")
        XCTAssertEqual(thumbnailer.thumbnail(of: text).failure?.kind, .notAnImage)
        let jpeg = try Fixtures.jpeg(Fixtures.gradient(width: 64, height: 64, channels: 3), width: 64, height: 64)
        let cut = try write(Array(jpeg.prefix(jpeg.count / 2)), name: "cut.jpg")
        XCTAssertEqual(thumbnailer.thumbnail(of: cut).failure?.kind, .truncated)
        XCTAssertEqual(thumbnailer.thumbnail(of: directory + "/missing.jpg").failure?.kind, .filesystem)
        XCTAssertEqual(thumbnailFiles(), [])
    }

    func testLeftoverTempFilesOfDeadRunsAreRemoved() throws {
        try FileManager.default.createDirectory(atPath: thumbs, withIntermediateDirectories: true)
        // PID 2^22 + 1 is above Linux's pid_max: no such process runs.
        let stale = thumbs + "/.imgfetch-4194305-abc.part"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: stale))
        _ = try thumbnailer()
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale))
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
