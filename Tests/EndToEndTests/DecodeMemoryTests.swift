import Foundation
import XCTest

/// `--max-decode-memory`: an image whose decode would need more than the run allows, by its own
/// header, fails as too-large before any pixel memory is taken; the default (256 MiB) refuses the
/// hostile shapes (a progressive JPEG declared 13000², its coefficients half a gigabyte).
final class DecodeMemoryTests: EndToEndTestCase {
    /// A progressive JPEG of `side`² noise, made by cjpeg.
    private func progressiveJPEG(side: Int) throws -> Data {
        var ppm = Data("P6\n\(side) \(side)\n255\n".utf8)
        var state: UInt32 = 7
        ppm.append(contentsOf: (0..<(side * side * 3)).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        })
        let input = scratch.file("noise.ppm")
        try ppm.write(to: input)
        let output = scratch.file("progressive.jpg")
        let run = try ImgFetchRunner.run(["-progressive", "-quality", "80", "-outfile", output.path, input.path],
                                         executable: URL(fileURLWithPath: "/usr/bin/cjpeg"))
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        return try Data(contentsOf: output)
    }

    private func failure(_ run: Execution) throws -> [String: Any] {
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").first)
        let result = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return try XCTUnwrap(result["error"] as? [String: Any], "\(result)")
    }

    func testAnImageThatNeedsMoreThanTheLimitFailsBeforeItIsDecoded() throws {
        let jpeg = try server.addFile("p.jpg", try progressiveJPEG(side: 1200))
        let refused = try fetch([server.url("/files/p.jpg")], ["--max-decode-memory", "2M", "--jsonl"])
        XCTAssertEqual(refused.exitCode, 1, refused.stderr)
        let error = try failure(refused)
        XCTAssertEqual(error["class"] as? String, "too-large")
        let message = try XCTUnwrap(error["message"] as? String)
        XCTAssertTrue(message.hasPrefix("image too large: decoding it needs about ") && message.hasSuffix("over --max-decode-memory (2 MiB)"),
                      message)
        XCTAssertEqual(try outputFiles(), [])
        // The same converted (a raster held whole), then within the default.
        let converted = try fetch([server.url("/files/p.jpg")], ["--max-decode-memory", "2M", "--save-as", "png", "--jsonl"])
        XCTAssertEqual(try failure(converted)["class"] as? String, "too-large")
        let saved = try fetch([server.url("/files/p.jpg")], [])
        XCTAssertEqual(saved.exitCode, 0, saved.stderr)
        XCTAssertEqual(try outputData("p.jpg"), jpeg)
    }

    func testAProgressiveJPEGDeclared13000SquareIsRefusedByTheDefault() throws {
        // A real progressive JPEG whose frame header (SOF2) is rewritten to 13000 × 13000: under
        // --max-pixels, but its coefficient buffers would take about 500 MiB.
        var jpeg = try progressiveJPEG(side: 64)
        let sof = try XCTUnwrap((0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC2 })
        for (offset, byte) in [(5, UInt8(13000 >> 8)), (6, UInt8(13000 & 0xff)), (7, UInt8(13000 >> 8)), (8, UInt8(13000 & 0xff))] {
            jpeg[sof + offset] = byte
        }
        _ = try server.addFile("huge.jpg", jpeg)
        let run = try fetch([server.url("/files/huge.jpg")], ["--jsonl"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let error = try failure(run)
        XCTAssertEqual(error["class"] as? String, "too-large")
        XCTAssertTrue((error["message"] as? String ?? "").contains("over --max-decode-memory (256 MiB)"), "\(error)")
    }
}
