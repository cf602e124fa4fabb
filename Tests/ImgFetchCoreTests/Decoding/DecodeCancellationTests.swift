@testable import ImgFetchCore
import XCTest

/// `DecodeCancellation`: a cancelled switch stops decodes at their next row (baseline JPEG, PNG)
/// and at the next chunk of input of a progressive JPEG, which is consumed whole before its first
/// row; the failure is `cancelled`, not a fault of the image.
final class DecodeCancellationTests: CodecTestCase {
    private func limits(cancelled: Bool) -> DecodeLimits {
        var limits = DecodeLimits()
        limits.cancellation = DecodeCancellation()
        if cancelled { limits.cancellation?.cancel() }
        return limits
    }

    func testACancelledSwitchStopsEveryKindOfDecode() throws {
        let pixels = Fixtures.gradient(width: 96, height: 64, channels: 3)
        let baseline = try Fixtures.jpeg(pixels, width: 96, height: 64)
        let progressive = try Fixtures.jpeg(pixels, width: 96, height: 64, options: Fixtures.jpegOptions(progressive: true))
        let png = try Fixtures.png(pixels, width: 96, height: 64, options: Fixtures.pngOptions(colorType: 2, bitDepth: 8))
        for (bytes, format) in [(baseline, ImageFormat.jpeg), (progressive, .jpeg), (png, .png)] {
            XCTAssertEqual(try verify(bytes, format, limits: limits(cancelled: true)), .failure(.cancelled), "\(format)")
            // The same switch, not cancelled, lets the decode run to its end.
            XCTAssertEqual(try verify(bytes, format, limits: limits(cancelled: false)).map(\.verified), .success(true), "\(format)")
        }
    }

    func testAConversionStopsToo() throws {
        let pixels = Fixtures.gradient(width: 64, height: 64, channels: 3)
        let progressive = try Fixtures.jpeg(pixels, width: 64, height: 64, options: Fixtures.jpegOptions(progressive: true))
        let path = try write(progressive, name: "p.jpg")
        let output = open(try write([], name: "out.png"), O_WRONLY | O_TRUNC)
        defer { close(output) }
        let result = ImageCodec.convert(path: path, format: .jpeg, to: .png, limits: limits(cancelled: true), output: output,
                                        scratchDirectory: directory)
        XCTAssertEqual(result.map { _ in true }, .failure(.cancelled))
    }
}
