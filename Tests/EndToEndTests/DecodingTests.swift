import Foundation
import XCTest

/// Every body is decoded before it is saved; hostile images are refused with a reason; --save-as
/// writes pixels identical to the reference decoders'.
final class DecodingTests: EndToEndTestCase {
    private var jpeg: Data!
    private var png: Data!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let names = try server.addSamples(count: 2, seed: 3)
        jpeg = try server.fileData(names.first { $0.hasPrefix("photo") }!)
        // sample-02 is RGBA in make-samples' rotation of color types.
        png = try server.fileData("sample-02.png")
    }

    func testAMixedListSavesExactlyTheValidImages() throws {
        try server.addFile("good.jpg", jpeg)
        try server.addFile("fine.png", png)
        try server.addFile("truncated.jpg", jpeg.prefix(jpeg.count / 2))
        try server.addFile("crc.png", Self.breakingCRC(of: png))
        try server.addFile("page.jpg", Data("<!DOCTYPE html><html><body>nope</body></html>".utf8))
        try server.addFile("empty.jpg", Data())
        try server.addFile("flood.png", Self.pngHeader(width: 64000, height: 64000))
        let expectations: [(String, String?)] = [
            ("/files/good.jpg", nil),
            ("/files/fine.png", nil),
            ("/files/truncated.jpg", "invalid JPEG: Premature end of JPEG file"),
            ("/files/crc.png", "CRC error"),
            ("/type/image%2Fjpeg/files/page.jpg", "not an image: looks like HTML"),
            ("/files/empty.jpg", "not an image: empty body"),
            ("/files/flood.png", "image too large: 64000×64000 pixels exceeds --max-pixels (178956970)"),
        ]
        let result = try fetch(expectations.map { server.url($0.0) })
        XCTAssertEqual(result.exitCode, 1)
        for (path, error) in expectations {
            let line = try XCTUnwrap(result.result(for: server.url(path)), path)
            if let error {
                XCTAssertEqual(line[0], "failed", path)
                XCTAssertTrue(line[2].contains(error), "\(path): \(line[2])")
            } else {
                XCTAssertEqual(line[0], "saved", path)
            }
        }
        XCTAssertEqual(try outputFiles(), ["fine.png", "good.jpg"])
        XCTAssertEqual(try outputData("good.jpg"), jpeg)
    }

    func testNoDecodeStillSniffsButSkipsVerification() throws {
        try server.addFile("truncated.jpg", jpeg.prefix(jpeg.count / 2))
        try server.addFile("page.jpg", Data("<html></html>".utf8))
        let result = try fetch([server.url("/files/truncated.jpg"), server.url("/files/page.jpg")], ["--no-decode", "--jsonl"])
        let objects = try result.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let truncated = try XCTUnwrap(objects.first { ($0["url"] as? String)?.hasSuffix("truncated.jpg") == true })
        XCTAssertEqual(truncated["status"] as? String, "saved")
        XCTAssertEqual(truncated["verified"] as? Bool, false)
        XCTAssertNotNil(truncated["width"] as? Int, "the header is still read")
        let page = try XCTUnwrap(objects.first { ($0["url"] as? String)?.hasSuffix("page.jpg") == true })
        XCTAssertEqual(page["status"] as? String, "failed")
    }

    func testVerifiedResultsCarryTheImageFacts() throws {
        try server.addFile("a.png", png)
        let result = try fetch([server.url("/files/a.png")], ["--jsonl"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["verified"] as? Bool, true)
        XCTAssertEqual(object["format"] as? String, "png")
        let reference = try XCTUnwrap(try NetpbmImage.reference("pngtopam", [], file: server.root.appendingPathComponent("a.png")))
        XCTAssertEqual(object["width"] as? Int, reference.width)
        XCTAssertEqual(object["height"] as? Int, reference.height)
    }

    func testSaveAsPPMMatchesLibjpegsOwnDecode() throws {
        try server.addFile("photo.jpg", jpeg)
        let result = try fetch([server.url("/files/photo.jpg")], ["--save-as", "ppm"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try outputFiles(), ["photo.ppm"])
        let saved = try XCTUnwrap(NetpbmImage(try outputData("photo.ppm")))
        let reference = try XCTUnwrap(try NetpbmImage.reference("djpeg", ["-ppm"], file: server.root.appendingPathComponent("photo.jpg")))
        XCTAssertEqual(saved, reference)
    }

    /// A JPEG whose JFIF version libjpeg does not know (one changed byte in APP0): libjpeg warns
    /// and decodes it whole, so it is a valid image, with libjpeg's own pixels; corruption still fails.
    func testAnUnknownJFIFRevisionIsNoCorruption() throws {
        var bytes = [UInt8](jpeg)
        // SOI, then APP0: FF E0, its length, "JFIF\0", then the major and minor version.
        XCTAssertEqual(Array(bytes[0..<4]), [0xFF, 0xD8, 0xFF, 0xE0])
        XCTAssertEqual(Array(bytes[6..<11]), Array("JFIF\0".utf8))
        bytes[11] = 2
        try server.addFile("revision.jpg", Data(bytes))
        let result = try fetch([server.url("/files/revision.jpg")], ["--save-as", "ppm"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let saved = try XCTUnwrap(NetpbmImage(try outputData("revision.ppm")))
        let reference = try XCTUnwrap(try NetpbmImage.reference("djpeg", ["-ppm"], file: server.root.appendingPathComponent("revision.jpg")))
        XCTAssertEqual(saved, reference)
    }

    func testSaveAsPAMAndPNGKeepEveryPixelOfAPNG() throws {
        try server.addFile("alpha.png", png)
        let source = server.root.appendingPathComponent("alpha.png")
        let reference = try XCTUnwrap(try NetpbmImage.reference("pngtopam", ["-alphapam"], file: source))
        XCTAssertEqual(reference.depth, 4, "the sample should have alpha")

        let pam = try fetch([server.url("/files/alpha.png")], ["--save-as", "pam"])
        XCTAssertEqual(pam.exitCode, 0, pam.stderr)
        XCTAssertEqual(try XCTUnwrap(NetpbmImage(try outputData("alpha.pam"))), reference)

        let png = try fetch([server.url("/files/alpha.png") + " out=normalized.png"], ["--save-as", "png"])
        XCTAssertEqual(png.exitCode, 0, png.stderr)
        let roundTrip = try NetpbmImage.reference("pngtopam", ["-alphapam"], file: URL(fileURLWithPath: outputDirectory).appendingPathComponent("normalized.png"))
        XCTAssertEqual(roundTrip, reference)

        let ppm = try fetch([server.url("/files/alpha.png") + " out=rgb.ppm"], ["--save-as", "ppm"])
        XCTAssertEqual(ppm.exitCode, 0, ppm.stderr)
        XCTAssertEqual(try XCTUnwrap(NetpbmImage(try outputData("rgb.ppm"))), reference.rgb)
    }

    func testMaxDimensionDownscalesTheLongerSide() throws {
        try server.addFile("photo.jpg", jpeg)
        let result = try fetch([server.url("/files/photo.jpg")], ["--save-as", "ppm", "--max-dimension", "40"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let saved = try XCTUnwrap(NetpbmImage(try outputData("photo.ppm")))
        XCTAssertEqual(max(saved.width, saved.height), 40)
    }

    func testMaxPixelsRefusesBeforeDecoding() throws {
        try server.addFile("photo.jpg", jpeg)
        let url = server.url("/files/photo.jpg")
        let result = try fetch([url], ["--max-pixels", "100"])
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertTrue(result.result(for: url)?[2].hasPrefix("image too large:") ?? false, result.stdout)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testFormatsWithoutADecoderAreSavedUnverifiedAndCounted() throws {
        let bodies: [(String, Data)] = [
            ("logo.svg", Data("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"/>".utf8)),
            ("favicon.ico", Data([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 22, 0, 0, 0])),
            ("photo.jxl", Data([0xFF, 0x0A, 0xFA, 0x3F, 0x01, 0x02, 0x03, 0x04])),
        ]
        for (name, data) in bodies { try server.addFile(name, data) }
        try server.addFile("photo.jpg", jpeg)
        let urls = (bodies.map(\.0) + ["photo.jpg"]).map { server.url("/files/" + $0) }
        let saved = try fetch(urls, ["--jsonl"])
        XCTAssertEqual(saved.exitCode, 0, saved.stderr)
        XCTAssertTrue(saved.stderr.contains("4 saved (3 unverified), 0 skipped, 0 failed"), saved.stderr)
        let objects = try saved.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        for (name, format) in [("logo.svg", "svg"), ("favicon.ico", "ico"), ("photo.jxl", "jxl"), ("photo.jpg", "jpeg")] {
            let object = try XCTUnwrap(objects.first { ($0["url"] as? String)?.hasSuffix(name) == true }, name)
            XCTAssertEqual(object["status"] as? String, "saved", name)
            XCTAssertEqual(object["format"] as? String, format, name)
            XCTAssertEqual(object["verified"] as? Bool, format == "jpeg", name)
        }
        for (name, data) in bodies { XCTAssertEqual(try outputData(name), data, name) }

        let converted = try fetch([server.url("/files/logo.svg") + " out=x.ppm"], ["--save-as", "ppm"])
        XCTAssertEqual(converted.exitCode, 1)
        XCTAssertTrue(converted.stdout.contains("cannot convert SVG to PPM: imgfetch cannot decode SVG"), converted.stdout)
    }

    func testRequireVerifiedFailsWhatCannotBeDecoded() throws {
        try server.addFile("logo.svg", Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8))
        try server.addFile("photo.jpg", jpeg)
        let result = try fetch([server.url("/files/logo.svg"), server.url("/files/photo.jpg")], ["--require-verified", "--jsonl"])
        XCTAssertEqual(result.exitCode, 1)
        let svg = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.contains("logo.svg") })
        XCTAssertTrue(svg.contains("\"class\":\"unverified\""), String(svg))
        XCTAssertTrue(svg.contains("SVG image not verified: imgfetch cannot decode SVG (--require-verified)"), String(svg))
        XCTAssertTrue(result.stderr.contains("1 saved, 0 skipped, 1 failed (1 unverified)"), result.stderr)
        XCTAssertEqual(try outputFiles(), ["photo.jpg"])
    }

    func testOptionsThatNeedOthersAreUsageErrors() throws {
        let url = server.url("/files/none.jpg")
        let resize = try fetch([url], ["--max-dimension", "64"])
        XCTAssertEqual(resize.exitCode, 2)
        XCTAssertTrue(resize.stderr.contains("option '--max-dimension' needs a pixel format to write: add --save-as jpeg"), resize.stderr)
        let strict = try fetch([url], ["--require-verified", "--no-decode"])
        XCTAssertEqual(strict.exitCode, 2)
        XCTAssertTrue(strict.stderr.contains("option '--require-verified' cannot be used with --no-decode"), strict.stderr)
        XCTAssertTrue(try server.requests().isEmpty, "a usage error makes no request")
    }

    func testJSONReportsTheSourceSizeAndTheSizeWritten() throws {
        try server.addFile("photo.jpg", jpeg)
        let source = try XCTUnwrap(try NetpbmImage.reference("djpeg", ["-ppm"], file: server.root.appendingPathComponent("photo.jpg")))
        let result = try fetch([server.url("/files/photo.jpg")], ["--save-as", "png", "--max-dimension", "64", "--jsonl"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["width"] as? Int, source.width)
        XCTAssertEqual(object["height"] as? Int, source.height)
        let written = try XCTUnwrap(NetpbmImage.reference("pngtopam", [], file: URL(fileURLWithPath: outputDirectory).appendingPathComponent("photo.png")))
        XCTAssertEqual(max(written.width, written.height), 64)
        XCTAssertEqual(object["output_width"] as? Int, written.width)
        XCTAssertEqual(object["output_height"] as? Int, written.height)

        let original = try fetch([server.url("/files/photo.jpg") + " out=kept.jpg"], ["--jsonl"])
        let kept = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(original.stdout.utf8)) as? [String: Any])
        XCTAssertTrue(kept["output_width"] is NSNull, original.stdout)
    }

    func testSaveAsJPEGWritesAJPEGThatDjpegReadsAndAQualityChangeRewritesIt() throws {
        try server.addFile("photo.jpeg", jpeg)
        let first = try fetch([server.url("/files/photo.jpeg")], ["--save-as", "jpeg", "--max-dimension", "64", "--jsonl"])
        XCTAssertEqual(first.exitCode, 0, first.stderr)
        XCTAssertEqual(try outputFiles(), ["photo.jpg"], "the name takes the .jpg extension")
        let file = URL(fileURLWithPath: outputDirectory).appendingPathComponent("photo.jpg")
        let written = try XCTUnwrap(NetpbmImage.reference("djpeg", ["-ppm"], file: file), "djpeg cannot read the output")
        XCTAssertEqual(max(written.width, written.height), 64)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["output_width"] as? Int, written.width)
        let atDefault = try Data(contentsOf: file)

        let lower = try fetch([server.url("/files/photo.jpeg")],
                              ["--save-as", "jpeg", "--max-dimension", "64", "--quality", "20", "--overwrite"])
        XCTAssertEqual(lower.exitCode, 0, lower.stderr)
        XCTAssertLessThan(try Data(contentsOf: file).count, atDefault.count, "the index reused the quality-95 file for quality 20")

        let refused = try fetch([server.url("/files/photo.jpeg")], ["--quality", "80"])
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("option '--quality' needs --save-as jpeg or webp"), refused.stderr)
    }

    func testResizeFitsEveryModeAndTheIndexTellsTheModesApart() throws {
        // 16 × 160: every mode shrinks it to 12.
        try server.addFile("photo.jpeg", jpeg)
        let source = try XCTUnwrap(try NetpbmImage.reference("djpeg", ["-ppm"], file: server.root.appendingPathComponent("photo.jpeg")))
        for (fit, extra) in [("center-crop", [String]()), ("pad", ["--background", "ff0000"]), ("keep-ratio", []), ("keep-ratio-largest", [])] {
            let run = try fetch([server.url("/files/photo.jpeg")],
                                ["--save-as", "png", "--resize", "12", "--fit", fit, "--overwrite", "--jsonl"] + extra)
            XCTAssertEqual(run.exitCode, 0, run.stderr)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(object["cache"] as? String, "downloaded", "\(fit): the index reused another mode's file")
            let written = try XCTUnwrap(NetpbmImage.reference("pngtopam", [], file: URL(fileURLWithPath: outputDirectory).appendingPathComponent("photo.png")))
            let shorter = min(source.width, source.height), longer = max(source.width, source.height)
            let expected: [Int] = switch fit {
            case "center-crop", "pad": [12, 12]
            case "keep-ratio": source.width < source.height ? [12, (longer * 24 + shorter) / (shorter * 2)] : [(longer * 24 + shorter) / (shorter * 2), 12]
            default: source.width > source.height ? [12, (shorter * 24 + longer) / (longer * 2)] : [(shorter * 24 + longer) / (longer * 2), 12]
            }
            XCTAssertEqual([written.width, written.height], expected, fit)
            XCTAssertEqual([object["output_width"] as? Int, object["output_height"] as? Int], expected, fit)
            XCTAssertEqual([object["width"] as? Int, object["height"] as? Int], [source.width, source.height], fit)
        }
    }

    func testSixteenBitAndGrayImagesStayLossless() throws {
        // A 16-bit gray ramp (0, 218, 436, …): 8-bit output would collapse it to 0, 1, 2, ….
        let (width, height) = (40, 3)
        var pgm = Data("P5\n\(width) \(height)\n65535\n".utf8)
        for i in 0..<(width * height) { pgm.append(contentsOf: [UInt8((i * 218) >> 8), UInt8((i * 218) & 0xFF)]) }
        let deep = try Self.runTool("pnmtopng", input: pgm)
        try server.addFile("deep.png", deep)
        let reference = try XCTUnwrap(try NetpbmImage.reference("pngtopam", [], file: server.root.appendingPathComponent("deep.png")))
        XCTAssertEqual(reference.maxval, 65535)
        let pam = try fetch([server.url("/files/deep.png")], ["--save-as", "pam"])
        XCTAssertEqual(pam.exitCode, 0, pam.stderr)
        XCTAssertEqual(try XCTUnwrap(NetpbmImage(try outputData("deep.pam"))), reference)
        let png = try fetch([server.url("/files/deep.png") + " out=again.png"], ["--save-as", "png"])
        XCTAssertEqual(png.exitCode, 0, png.stderr)
        XCTAssertEqual(try NetpbmImage.reference("pngtopam", [], file: URL(fileURLWithPath: outputDirectory).appendingPathComponent("again.png")),
                       reference)

        var gray = Data("P5\n\(width) \(height)\n255\n".utf8)
        for i in 0..<(width * height) { gray.append(UInt8(i * 2 % 256)) }
        try server.addFile("gray.jpg", try Self.runTool("cjpeg", ["-grayscale", "-quality", "90"], input: gray))
        let grayReference = try XCTUnwrap(try NetpbmImage.reference("djpeg", ["-pnm"], file: server.root.appendingPathComponent("gray.jpg")))
        XCTAssertEqual(grayReference.depth, 1)
        let grayPAM = try fetch([server.url("/files/gray.jpg")], ["--save-as", "pam"])
        XCTAssertEqual(grayPAM.exitCode, 0, grayPAM.stderr)
        let saved = try XCTUnwrap(NetpbmImage(try outputData("gray.pam")))
        XCTAssertEqual(saved.depth, 1)
        XCTAssertEqual(saved.pixels, grayReference.pixels)
    }

    /// Runs a Netpbm or libjpeg tool with `input` on stdin and returns its stdout.
    static func runTool(_ tool: String, _ arguments: [String] = [], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        return data
    }

    // MARK: - Fixtures

    /// The PNG with one byte of its first IDAT chunk's CRC changed.
    static func breakingCRC(of png: Data) -> Data {
        var bytes = [UInt8](png)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if type == "IDAT" {
                bytes[offset + 8 + length] ^= 0xFF
                break
            }
            offset += 12 + length
        }
        return Data(bytes)
    }

    /// A PNG signature and IHDR declaring `width`×`height` 8-bit RGB, then nothing: a pixel flood in 33 bytes.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var ihdr = Data("IHDR".utf8)
        for value in [width, height] { withUnsafeBytes(of: value.bigEndian) { ihdr.append(contentsOf: $0) } }
        ihdr.append(contentsOf: [8, 2, 0, 0, 0])
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        data.append(ihdr)
        withUnsafeBytes(of: crc32(ihdr).bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    private static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
