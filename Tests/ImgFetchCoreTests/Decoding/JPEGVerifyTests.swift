import CImageCodec
import CImageCodecFixtures
import XCTest
@testable import ImgFetchCore

final class JPEGVerifyTests: CodecTestCase {
    private let width = 48, height = 32

    private func jpeg(_ options: imgcodec_test_jpeg_options = Fixtures.jpegOptions(), channels: Int = 3) throws -> [UInt8] {
        try Fixtures.jpeg(Fixtures.gradient(width: width, height: height, channels: channels), width: width, height: height, options: options)
    }

    /// Offset of the SOF0 marker's segment (at 0xFF 0xC0).
    private func sof0(_ bytes: [UInt8]) throws -> Int {
        try XCTUnwrap((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
    }

    private func verified(channels: Int, orientation: Int = 1) -> Result<ImageInfo, DownloadError> {
        .success(ImageInfo(width: width, height: height, channels: channels, bitDepth: 8, orientation: orientation, verified: true))
    }

    // MARK: - Valid files

    func testBaseline() throws {
        XCTAssertEqual(try verify(try jpeg(), .jpeg), verified(channels: 3))
    }

    func testProgressive() throws {
        XCTAssertEqual(try verify(try jpeg(Fixtures.jpegOptions(progressive: true)), .jpeg), verified(channels: 3))
    }

    func testArithmeticCoded() throws {
        XCTAssertEqual(try verify(try jpeg(Fixtures.jpegOptions(arithmetic: true)), .jpeg), verified(channels: 3))
        XCTAssertEqual(try verify(try jpeg(Fixtures.jpegOptions(progressive: true, arithmetic: true)), .jpeg), verified(channels: 3))
    }

    func testGrayscale() throws {
        let gray = try jpeg(Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_GRAY)), channels: 1)
        XCTAssertEqual(try verify(gray, .jpeg), verified(channels: 1))
    }

    func testCMYKAndYCCK() throws {
        let cmyk = try jpeg(Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_CMYK)), channels: 4)
        XCTAssertEqual(try verify(cmyk, .jpeg), verified(channels: 4))
        let ycck = try jpeg(Fixtures.jpegOptions(progressive: true, colorSpace: Int32(IMGCODEC_TEST_JPEG_YCCK)), channels: 4)
        XCTAssertEqual(try verify(ycck, .jpeg), verified(channels: 4))
    }

    func testExifOrientationInBothByteOrders() throws {
        XCTAssertEqual(try verify(try jpeg(Fixtures.jpegOptions(orientation: 6)), .jpeg), verified(channels: 3, orientation: 6))
        var littleEndian = Fixtures.jpegOptions(orientation: 8)
        littleEndian.exif_little_endian = 1
        XCTAssertEqual(try verify(try jpeg(littleEndian), .jpeg), verified(channels: 3, orientation: 8))
    }

    func testTrailingBytesAfterEOIAreAccepted() throws {
        XCTAssertEqual(try verify(try jpeg() + Array("trailing junk".utf8), .jpeg), verified(channels: 3))
    }

    func testScansUpToTheLimitAreDecoded() throws {
        var options = Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_GRAY))
        options.many_scans = 1  // 1 + 63 × 11 = 694 scans
        let bytes = try jpeg(options, channels: 1)
        XCTAssertEqual(try verify(bytes, .jpeg, limits: DecodeLimits(maxScans: 694)), verified(channels: 1))
        try assertRejected(bytes, .jpeg, "invalid JPEG: more than 693 progressive scans", limits: DecodeLimits(maxScans: 693))
    }

    // MARK: - Hostile and damaged files

    func testScanBombIsRejected() throws {
        var options = Fixtures.jpegOptions(colorSpace: Int32(IMGCODEC_TEST_JPEG_GRAY))
        options.many_scans = 1
        try assertRejected(try jpeg(options, channels: 1), .jpeg, "invalid JPEG: more than 500 progressive scans")
    }

    func testTruncatedAtSeveralOffsets() throws {
        for options in [Fixtures.jpegOptions(), Fixtures.jpegOptions(progressive: true), Fixtures.jpegOptions(arithmetic: true)] {
            let bytes = try jpeg(options)
            for length in [1, 2, 3, 20, 100, bytes.count / 3, bytes.count / 2, bytes.count - 40, bytes.count - 2, bytes.count - 1] {
                try assertRejected(Array(bytes.prefix(length)), .jpeg, "invalid JPEG: Premature end of JPEG file", kind: .truncated)
            }
        }
    }

    func testZeroBytes() throws {
        try assertRejected([], .jpeg, "invalid JPEG: Premature end of JPEG file", kind: .truncated)
    }

    func testHTMLServedAsJPEG() throws {
        try assertRejected(Array("<!DOCTYPE html><html><body>Not found</body></html>".utf8), .jpeg,
                           "invalid JPEG: Not a JPEG file: starts with 0x3c 0x21")
    }

    func testPixelFloodHeaderIsRefusedBeforeDecoding() throws {
        var bytes = try jpeg()
        let sof = try sof0(bytes)
        bytes[sof + 5] = 0xFA; bytes[sof + 6] = 0x00  // height 64000
        bytes[sof + 7] = 0xFA; bytes[sof + 8] = 0x00  // width 64000
        try assertRejected(bytes, .jpeg, "image too large: 64000×64000 pixels exceeds --max-pixels (178956970)", kind: .tooLarge)
    }

    func testWidthAndHeightLimits() throws {
        try assertRejected(try jpeg(), .jpeg, "image too large: width 48 exceeds the limit (40)", kind: .tooLarge,
                           limits: DecodeLimits(maxWidth: 40))
        try assertRejected(try jpeg(), .jpeg, "image too large: height 32 exceeds the limit (31)", kind: .tooLarge,
                           limits: DecodeLimits(maxHeight: 31))
        try assertRejected(try jpeg(), .jpeg, "image too large: 48×32 pixels exceeds --max-pixels (1535)", kind: .tooLarge,
                           limits: DecodeLimits(maxPixels: 1535))
    }

    func testDecoderMemoryCapStopsProgressiveFiles() throws {
        let side = 600
        let pixels = Fixtures.gradient(width: side, height: side, channels: 3)
        let progressive = try Fixtures.jpeg(pixels, width: side, height: side, options: Fixtures.jpegOptions(progressive: true))
        try assertRejected(progressive, .jpeg, "image too large: decoding it needs about 2 MiB, over --max-decode-memory (1 MiB)",
                           kind: .tooLarge, limits: DecodeLimits(maxMemory: 1 << 20))
        XCTAssertEqual(try verify(progressive, .jpeg, limits: DecodeLimits(maxMemory: 4 << 20)).map(\.width), .success(side))
        // Baseline files stream through a few rows and never need the cap.
        let baseline = try Fixtures.jpeg(pixels, width: side, height: side, options: Fixtures.jpegOptions())
        XCTAssertEqual(try verify(baseline, .jpeg, limits: DecodeLimits(maxMemory: 1 << 20)).map(\.width), .success(side))
    }

    func testTwelveBitIsUnsupported() throws {
        var bytes = try jpeg()
        let sof = try sof0(bytes)
        bytes[sof + 1] = 0xC1  // extended sequential, as 12-bit files are
        bytes[sof + 4] = 12
        try assertRejected(bytes, .jpeg, "unsupported: 12-bit JPEG")
    }

    func testLosslessJPEGIsUnsupported() throws {
        var bytes = try jpeg()
        bytes[try sof0(bytes) + 1] = 0xC3
        try assertRejected(bytes, .jpeg, "unsupported: JPEG process SOF3")
    }

    /// Offset of the SOS marker (at 0xFF 0xDA).
    private func sos(_ bytes: [UInt8]) throws -> Int {
        try XCTUnwrap((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
    }

    func testDamagedHeaders() throws {
        let bytes = try jpeg()
        let sof = try sof0(bytes)
        var badSOI = bytes
        badSOI[1] = 0xD9
        try assertRejected(badSOI, .jpeg, "invalid JPEG: Not a JPEG file: starts with 0xff 0xd9")
        var badLength = bytes
        badLength[sof + 3] += 1
        try assertRejected(badLength, .jpeg, "invalid JPEG: Bogus marker length")
        var noComponents = bytes
        noComponents[sof + 9] = 0
        try assertRejected(noComponents, .jpeg, "invalid JPEG: Empty JPEG image (DNL not supported)")
        var zeroWidth = bytes
        zeroWidth[sof + 7] = 0; zeroWidth[sof + 8] = 0
        try assertRejected(zeroWidth, .jpeg, "invalid JPEG: Empty JPEG image (DNL not supported)")
    }

    func testMarkerInsideEntropyCodedData() throws {
        var bytes = try jpeg()
        let scan = try sos(bytes)
        let middle = scan + (bytes.count - scan) / 2
        bytes[middle] = 0xFF
        bytes[middle + 1] = 0xD9  // EOI in the middle of the scan
        try assertRejected(bytes, .jpeg, "invalid JPEG: Corrupt JPEG data: premature end of data segment")
    }

    func testBitFlipsInScanDataNeverCrashAndAreReportedAsInvalid() throws {
        let bytes = try jpeg(Fixtures.jpegOptions(quality: 95))
        let scanStart = try sos(bytes)
        var rejected = 0
        for position in stride(from: scanStart + 20, to: bytes.count - 4, by: 37) {
            var damaged = bytes
            damaged[position] ^= 0x10
            switch try verify(damaged, .jpeg) {
            case .success:
                continue  // JPEG has no checksum: some flips decode to other, still valid, data
            case .failure(let error):
                XCTAssertEqual(error.kind, .notAnImage)
                XCTAssertTrue(error.message.hasPrefix("invalid JPEG: "), error.message)
                rejected += 1
            }
        }
        XCTAssertGreaterThan(rejected, 0)
    }

    func testFormatsWithoutADecoderAreRefused() throws {
        XCTAssertEqual(try verify(Array("<svg/>".utf8), .svg), .failure(DownloadError(.notAnImage, "unsupported: SVG images are not decoded")))
        XCTAssertEqual(try verify([0xFF, 0x0A, 0, 0], .jxl), .failure(DownloadError(.notAnImage, "unsupported: JPEG XL images are not decoded")))
    }

    func testMissingFile() {
        XCTAssertEqual(ImageCodec.verify(path: directory + "/missing.jpg", format: .jpeg),
                       .failure(DownloadError(.filesystem, "cannot open \(directory)/missing.jpg: No such file or directory")))
    }
}
