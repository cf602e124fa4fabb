import CImageCodec
import CImageCodecFixtures
import Glibc
import XCTest
@testable import ImgFetchCore

/// JPEG streams that cost by count rather than size (issue 6, decoders): thousands of scans, a
/// quarter of a million restart markers, tens of thousands of table redefinitions and a thousand
/// 64 KiB APP1 segments. JPEGVerifyTests covers the 694-scan fixture against the limit; these are
/// hand-built streams far past it, each with its time and peak RSS growth bounded.
final class HostileJPEGStreamTests: CodecTestCase {
    /// A gray fixture JPEG (libjpeg's standard Huffman tables when baseline).
    private func grayJPEG(side: Int, progressive: Bool) throws -> [UInt8] {
        try Fixtures.jpeg(Fixtures.gradient(width: side, height: side, channels: 1), width: side, height: side,
                          options: Fixtures.jpegOptions(progressive: progressive, colorSpace: Int32(IMGCODEC_TEST_JPEG_GRAY)))
    }

    /// A 256² gray progressive JPEG followed by `extraScans` more DC scans (Ah 0, Al 0), each valid:
    /// after the last refinement every coefficient is complete, and redoing a first scan at full
    /// precision raises no "inconsistent progression" warning. The scan-bomb shape libjpeg-turbo's
    /// TJFLAG_LIMITSCANS exists for.
    private func scanBomb(extraScans: Int, endOfImage: Bool = true) throws -> [UInt8] {
        let side = 256
        let base = try grayJPEG(side: side, progressive: true)
        let component = try XCTUnwrap(try JPEGSegments(base).segments.first { $0.marker == 0xC2 }).payload[6]
        var bytes = Array(base.dropLast(2))  // without EOI
        // DC table 0 redefined as one 2-bit code for "difference 0": a scan of zero bytes decodes.
        bytes += JPEGSegments.segment(0xC4, [0x00, 0, 1] + [UInt8](repeating: 0, count: 14) + [0])
        let scan = JPEGSegments.segment(0xDA, [1, component, 0x00, 0, 0, 0x00]) + [UInt8](repeating: 0, count: side * side / 64 * 2 / 8)
        bytes.reserveCapacity(bytes.count + scan.count * extraScans + 2)
        for _ in 0..<extraScans { bytes += scan }
        if endOfImage { bytes += [0xFF, 0xD9] }
        return bytes
    }

    // MARK: - Scans

    func testProgressiveJPEGWithFiveThousandScansIsRefusedAtTheLimit() throws {
        let bytes = try scanBomb(extraScans: 5000)
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "5,006-scan JPEG", seconds: 1, megabytes: 8),
                       .failure(DownloadError(.notAnImage, "invalid JPEG: more than 500 progressive scans")))
        let (converted, written) = try convertBounded(bytes, .jpeg, "5,006-scan JPEG", seconds: 1, megabytes: 8)
        XCTAssertEqual(converted.map(\.width), .failure(DownloadError(.notAnImage, "invalid JPEG: more than 500 progressive scans")))
        XCTAssertEqual(written, 0)
        // The limit is the only thing wrong with it.
        XCTAssertEqual(try verify(bytes, .jpeg, limits: DecodeLimits(maxScans: 0)).map(\.width), .success(256))
        XCTAssertEqual(try verify(try scanBomb(extraScans: 400), .jpeg).map(\.width), .success(256))
    }

    func testScanLimitFiresBeforeTheLaterScansAreRead() throws {
        // Cut off before EOI: reading every scan would end in "Premature end"; the limit answers first.
        let bytes = try scanBomb(extraScans: 5000, endOfImage: false)
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "truncated 5,006-scan JPEG", seconds: 1, megabytes: 8),
                       .failure(DownloadError(.notAnImage, "invalid JPEG: more than 500 progressive scans")))
        XCTAssertEqual(try verify(bytes, .jpeg, limits: DecodeLimits(maxScans: 0)),
                       .failure(DownloadError(.truncated, "invalid JPEG: Premature end of JPEG file")))
    }

    // MARK: - Restart markers

    /// A 4096² gray baseline JPEG with a restart interval of one MCU: 262,143 RSTn markers, each
    /// MCU a flat block (DC difference 0, then end-of-block: "00" "1010", padded with ones).
    private func restartFlood(damage: ((inout [UInt8]) -> Void)? = nil) throws -> [UInt8] {
        let side = 4096
        var segments = try JPEGSegments(try grayJPEG(side: 16, progressive: false))
        try segments.setSize(width: side, height: side)
        let blocks = side / 8 * side / 8
        var data: [UInt8] = []
        data.reserveCapacity(blocks * 3)
        for block in 0..<blocks {
            data.append(0b0010_1011)
            if block < blocks - 1 { data += [0xFF, 0xD0 + UInt8(block % 8)] }
        }
        damage?(&data)
        return segments.file(after: JPEGSegments.segment(0xDD, [0, 1]), scans: segments.firstScanHeader + data + [0xFF, 0xD9])
    }

    func testQuarterMillionRestartMarkersDecodeInBoundedTime() throws {
        let bytes = try restartFlood()
        let info = ImageInfo(width: 4096, height: 4096, channels: 1, bitDepth: 8, verified: true)
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "262,143 restart markers", seconds: 5, megabytes: 8), .success(info))
    }

    func testRestartMarkerOutOfSequenceIsRejected() throws {
        let bytes = try restartFlood { data in data[3 * 1000 + 2] = 0xD3 }  // RST0 expected after MCU 1000
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "restart marker out of sequence", seconds: 1, megabytes: 8),
                       .failure(DownloadError(.notAnImage, "invalid JPEG: Corrupt JPEG data: found marker 0xd3 instead of RST0")))
    }

    // MARK: - Tables and APP segments

    func testTensOfThousandsOfTableRedefinitionsCostNoMemory() throws {
        // Each DQT and DHT overwrites its table slot: 60,000 redefinitions, 5.7 MB, no growth.
        let segments = try JPEGSegments(try grayJPEG(side: 16, progressive: false))
        let tables = segments.segments.filter { $0.marker == 0xDB || $0.marker == 0xC4 }.flatMap { JPEGSegments.segment($0.marker, $0.payload) }
        var flood: [UInt8] = []
        flood.reserveCapacity(tables.count * 20_000)
        for _ in 0..<20_000 { flood += tables }
        let bytes = segments.file(before: flood)
        XCTAssertGreaterThan(bytes.count, 5_000_000)
        let info = ImageInfo(width: 16, height: 16, channels: 1, bitDepth: 8, verified: true)
        XCTAssertEqual(try verifyBounded(bytes, .jpeg, "60,000 DQT/DHT segments", megabytes: 8), .success(info))
    }

    func testThousandsOfLargeAPP1SegmentsAreNotRetained() throws {
        // 900 APP1 segments of 64 KiB (59 MB): libjpeg's jpeg_save_markers would keep them all in
        // memory; the codec reads the first Exif block and skips the rest.
        var exif = TIFFBlock()
        exif.u16(1)
        exif.entry(tag: 0x0112, type: 3, count: 1, value: 6)
        exif.u32(0)
        let filler = JPEGSegments.segment(0xE1, Array("Exif".utf8) + [0, 0] + [UInt8](repeating: 0, count: 65_527))
        let xmp = JPEGSegments.segment(0xE1, Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + [UInt8](repeating: 0x20, count: 65_504))
        let base = try grayJPEG(side: 16, progressive: false)
        for (label, first, orientation) in [("Exif first", exif.app1, 6), ("XMP first", xmp, 1)] {
            let path = directory + "/app1-flood.jpg"
            try writeInPieces(to: path, [Array(base.prefix(2)), first] + Array(repeating: filler, count: 450)
                + Array(repeating: xmp, count: 450) + [exif.app1, Array(base.dropFirst(2))])
            let info = ImageInfo(width: 16, height: 16, channels: 1, bitDepth: 8, orientation: orientation, verified: true)
            XCTAssertEqual(verifyBounded(path: path, .jpeg, "900 APP1 segments of 64 KiB, \(label)", megabytes: 8), .success(info))
        }
    }

    /// Writes `pieces` one after another, so that building the file does not hold all of it at once.
    private func writeInPieces(to path: String, _ pieces: [[UInt8]]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Fixtures.Failure(description: "cannot create \(path)") }
        defer { close(fd) }
        for piece in pieces {
            let written = piece.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == piece.count else { throw Fixtures.Failure(description: "short write to \(path)") }
        }
    }
}
