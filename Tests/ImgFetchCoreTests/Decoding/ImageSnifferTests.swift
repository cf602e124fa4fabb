import Foundation
import XCTest
@testable import ImgFetchCore

final class ImageSnifferTests: XCTestCase {
    // MARK: - Magic bytes

    func testJPEG() {
        XCTAssertEqual(ImageSniffer.sniff([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)), .image(.jpeg))
        XCTAssertEqual(ImageSniffer.sniff([0xFF, 0xD8, 0xFF, 0xE1]), .image(.jpeg))
    }

    func testPNG() {
        XCTAssertEqual(ImageSniffer.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)),
                       .image(.png))
    }

    func testTruncatedPNGSignatureIsNotPNG() {
        XCTAssertNotEqual(ImageSniffer.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]), .image(.png))
    }

    func testGIF87aAndGIF89a() {
        XCTAssertEqual(ImageSniffer.sniff(Array("GIF87a".utf8) + [1, 0, 1, 0]), .image(.gif))
        XCTAssertEqual(ImageSniffer.sniff(Array("GIF89a".utf8) + [1, 0, 1, 0]), .image(.gif))
    }

    func testWebP() {
        let body = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [0, 0, 0, 0]
        XCTAssertEqual(ImageSniffer.sniff(body), .image(.webp))
    }

    func testRIFFThatIsNotWebPIsNotAnImage() {
        let wave = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WAVEfmt ".utf8)
        XCTAssertNotEqual(ImageSniffer.sniff(wave), .image(.webp))
    }

    func testBMP() {
        let header = Array("BM".utf8) + [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0] + [UInt8](repeating: 1, count: 16)
        XCTAssertEqual(ImageSniffer.sniff(header), .image(.bmp))
    }

    func testTIFFLittleAndBigEndian() {
        XCTAssertEqual(ImageSniffer.sniff([0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0]), .image(.tiff))
        XCTAssertEqual(ImageSniffer.sniff([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 0x08]), .image(.tiff))
    }

    func testAVIF() {
        XCTAssertEqual(ImageSniffer.sniff(ftyp("avif")), .image(.avif))
        XCTAssertEqual(ImageSniffer.sniff(ftyp("avis")), .image(.avif))
    }

    func testHEIC() {
        for brand in ["heic", "heix", "mif1", "msf1"] {
            XCTAssertEqual(ImageSniffer.sniff(ftyp(brand)), .image(.heic), brand)
        }
    }

    func testOtherFtypBrandIsNotAnImage() {
        // An MP4 video: ftyp box with brand isom.
        guard case .notAnImage = ImageSniffer.sniff(ftyp("isom")) else { return XCTFail("mp4 sniffed as an image") }
    }

    func testSniffAcceptsAnyByteCollection() {
        let bytes: [UInt8] = [0, 0, 0xFF, 0xD8, 0xFF, 0xE0]
        XCTAssertEqual(ImageSniffer.sniff(bytes[2...]), .image(.jpeg))
        XCTAssertEqual(ImageSniffer.sniff(Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61])), .image(.gif))
    }

    func testSniffLooksOnlyAtTheHead() {
        let body = [UInt8](repeating: 0x20, count: 100) + [0xFF, 0xD8, 0xFF]
        XCTAssertNotEqual(ImageSniffer.sniff(body), .image(.jpeg))
    }

    // MARK: - Not an image

    func testEmptyBody() {
        XCTAssertEqual(ImageSniffer.sniff([UInt8]()), .notAnImage("not an image: empty body"))
    }

    func testHTML() {
        XCTAssertTrue(description(of: "<!DOCTYPE html><html><body>Not Found</body></html>").contains("HTML"))
        XCTAssertTrue(description(of: "<html><head>").contains("HTML"))
        XCTAssertTrue(description(of: "<HTML><BODY>").contains("HTML"))
    }

    func testHTMLWithLeadingWhitespace() {
        XCTAssertTrue(description(of: "\r\n\n   \t<!doctype HTML>\n<html>").contains("HTML"))
    }

    func testHTMLWithByteOrderMark() {
        let body: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<!DOCTYPE html>\n<html lang=\"en\">".utf8)
        XCTAssertTrue(text(of: ImageSniffer.sniff(body)).contains("HTML"))
        let bomAndSpace: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("\n  <html>".utf8)
        XCTAssertTrue(text(of: ImageSniffer.sniff(bomAndSpace)).contains("HTML"))
    }

    func testJSON() {
        XCTAssertTrue(description(of: "{\"error\": \"not found\"}").contains("JSON"))
        XCTAssertTrue(description(of: "  [1, 2, 3]").contains("JSON"))
    }

    func testXML() {
        let message = description(of: "<?xml version=\"1.0\"?><rss><channel></channel></rss>")
        XCTAssertTrue(message.contains("XML"), message)
        XCTAssertFalse(message.contains("SVG"), message)
    }

    func testSVGIsAnImageFormat() {
        XCTAssertEqual(ImageSniffer.sniff(Array("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\">".utf8)), .image(.svg))
        XCTAssertEqual(ImageSniffer.sniff(Array("\u{FEFF} <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"x\">".utf8)), .image(.svg))
    }

    func testFormatsWithoutADecoder() {
        XCTAssertEqual(ImageSniffer.sniff([0xFF, 0x0A, 0xFA, 0x3F]), .image(.jxl))
        XCTAssertEqual(ImageSniffer.sniff([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0]), .image(.jxl))
        XCTAssertEqual(ImageSniffer.sniff([0, 0, 1, 0, 1, 0, 16, 16]), .image(.ico))
        XCTAssertEqual(ImageSniffer.sniff([0, 0, 2, 0, 1, 0, 16, 16]), .image(.ico))
        XCTAssertEqual(ImageSniffer.sniff([0, 0, 1, 0, 0, 0, 16, 16]), .notAnImage("not an image: unknown format (starts with 00 00 01 00)"))
        for format in [ImageFormat.svg, .jxl, .ico, .heic] { XCTAssertFalse(format.isDecodable) }
        for format in [ImageFormat.jpeg, .png, .gif, .webp, .avif, .tiff, .bmp] { XCTAssertTrue(format.isDecodable) }
    }

    func testText() {
        let message = description(of: "Not Found\nThe requested URL was not found on this server.")
        XCTAssertTrue(message.contains("text"), message)
    }

    func testUnknownBinaryNamesItsFirstBytesInHex() {
        let message = text(of: ImageSniffer.sniff([0x00, 0x01, 0xAB, 0xCD, 0xEF, 0x02]))
        XCTAssertTrue(message.contains("unknown"), message)
        XCTAssertTrue(message.lowercased().contains("00 01 ab cd"), message)
    }

    func testEveryNotAnImageMessageSaysSo() {
        for body in ["<html>", "{}", "<?xml?>", "hello"] {
            XCTAssertTrue(description(of: body).hasPrefix("not an image"), body)
        }
    }

    // MARK: - Helpers

    private func ftyp(_ brand: String) -> [UInt8] {
        [0, 0, 0, 0x20] + Array("ftyp".utf8) + Array(brand.utf8) + [0, 0, 0, 0] + Array("mif1miaf".utf8)
    }

    private func description(of body: String) -> String {
        text(of: ImageSniffer.sniff(Array(body.utf8)))
    }

    private func text(of verdict: ImageSniffer.Verdict, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard case .notAnImage(let message) = verdict else {
            XCTFail("expected not an image, got \(verdict)", file: file, line: line)
            return ""
        }
        return message
    }
}
