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

    func testOtherFormatsAreSavedUnverifiedButNotConverted() throws {
        let gif = Data("GIF89a".utf8) + Data([1, 0, 1, 0, 0, 0, 0, 0x3B])
        try server.addFile("anim.gif", gif)
        let saved = try fetch([server.url("/files/anim.gif")], ["--jsonl"])
        XCTAssertEqual(saved.exitCode, 0, saved.stderr)
        XCTAssertTrue(saved.stdout.contains("\"verified\":false"), saved.stdout)
        XCTAssertEqual(try outputData("anim.gif"), gif)
        let converted = try fetch([server.url("/files/anim.gif") + " out=x.ppm"], ["--save-as", "ppm"])
        XCTAssertEqual(converted.exitCode, 1)
        XCTAssertTrue(converted.stdout.contains("cannot convert GIF to PPM"), converted.stdout)
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
