import Foundation
import XCTest

/// A list that mixes the formats the web serves, each made by its own library's command-line
/// encoder from one sample photo: every valid image is saved verified with its size, every broken
/// one fails with its decoder's reason and leaves no file, and every one converts to PNG.
final class ImageFormatTests: EndToEndTestCase {
    private var samples: EveryFormat!

    override func setUpWithError() throws {
        try super.setUpWithError()
        samples = try EveryFormat(servedBy: server)
    }

    func testEveryFormatIsVerifiedAndBrokenOnesFail() throws {
        let formats = samples.formats
        let size = (width: samples.width, height: samples.height)
        let data = { (name: String) in try Data(contentsOf: self.server.root.appendingPathComponent(name)) }
        let webp = try data("lossy.webp"), gif = try data("photo.gif"), bmp = try data("photo.bmp"), avif = try data("photo.avif")
        var fake = Data("RIFF".utf8) + Data([200, 0, 0, 0]) + Data("WEBP".utf8)
        fake.append(Data((0..<192).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
        // An AVIF whose AV1 data starts with a broken OBU header: dav1d complains, and must do it quietly.
        var badAV1 = [UInt8](avif)
        let mdat = try XCTUnwrap((0..<(badAV1.count - 4)).first { Array(badAV1[$0..<$0 + 4]) == Array("mdat".utf8) })
        badAV1[mdat + 4] ^= 0xFF
        let broken: [(String, Data, String)] = [
            ("fake.webp", fake, "invalid WebP: "),
            ("cut.webp", webp.prefix(webp.count * 2 / 3), "invalid WebP: truncated"),
            ("cut.gif", gif.prefix(gif.count / 2), "invalid GIF: truncated"),
            ("cut.bmp", bmp.prefix(bmp.count - 100), "invalid BMP: truncated"),
            ("bad.avif", Data(badAV1), "invalid AVIF: "),
        ]
        for (name, body, _) in broken { try server.addFile(name, body) }
        let urls = (formats.keys.sorted() + broken.map(\.0)).map { server.url("/files/" + $0) }
        let result = try fetch(urls, ["--jsonl"])
        XCTAssertEqual(result.exitCode, 1)
        let objects = try result.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        func object(_ name: String) throws -> [String: Any] {
            try XCTUnwrap(objects.first { ($0["url"] as? String)?.hasSuffix("/" + name) == true }, name)
        }
        for (name, format) in formats {
            let item = try object(name)
            XCTAssertEqual(item["status"] as? String, "saved", "\(name): \(item)")
            XCTAssertEqual(item["format"] as? String, format, name)
            XCTAssertEqual(item["verified"] as? Bool, true, name)
            XCTAssertEqual(item["width"] as? Int, size.width, name)
            XCTAssertEqual(item["height"] as? Int, size.height, name)
        }
        for (name, _, reason) in broken {
            let item = try object(name)
            XCTAssertEqual(item["status"] as? String, "failed", name)
            let message = ((item["error"] as? [String: Any])?["message"] as? String) ?? ""
            XCTAssertTrue(message.hasPrefix(reason), "\(name): \(message)")
        }
        // One file per valid image (photo.* share a stem, so all but the first get a hash suffix), no temp files.
        let files = try outputFiles()
        XCTAssertEqual(files.count, formats.count, files.joined(separator: " "))
        XCTAssertFalse(files.contains { $0.hasPrefix(".") })
        // stderr holds imgfetch's own lines only: one per failure and the summary (no library chatter).
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, broken.count + 1, result.stderr)
        XCTAssertTrue(lines.dropLast().allSatisfy { $0.hasPrefix("failed ") }, result.stderr)
        XCTAssertTrue(result.stderr.contains("8 saved, 0 skipped, 5 failed (4 truncated, 1 not-an-image)"), result.stderr)
    }

    func testEveryFormatConvertsToPNG() throws {
        let formats = samples.formats
        let urls = formats.keys.sorted().map { server.url("/files/" + $0) + " out=" + $0.replacingOccurrences(of: ".", with: "-") + ".png" }
        let result = try fetch(urls, ["--save-as", "png"])
        XCTAssertEqual(result.exitCode, 0, result.stdout + result.stderr)
        for name in formats.keys {
            let file = URL(fileURLWithPath: outputDirectory).appendingPathComponent(name.replacingOccurrences(of: ".", with: "-") + ".png")
            let image = try XCTUnwrap(try NetpbmImage.reference("pngtopam", [], file: file), name)
            XCTAssertEqual(image.width, samples.width, name)
            XCTAssertEqual(image.height, samples.height, name)
        }
        // Lossless sources come out exactly as the sample.
        let sample = try XCTUnwrap(NetpbmImage(Data(contentsOf: samples.ppm)))
        for name in ["lossless-webp.png", "photo-tif.png", "photo-bmp.png", "photo-png.png"] {
            let file = URL(fileURLWithPath: outputDirectory).appendingPathComponent(name)
            XCTAssertEqual(try NetpbmImage.reference("pngtopam", [], file: file), sample, name)
        }
    }
}
