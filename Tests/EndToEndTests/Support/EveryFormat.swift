import Foundation
import XCTest

/// One sample photo encoded in every format imgfetch decodes, each by its own library's
/// command-line encoder, in a test server's directory (served at `/files/NAME`).
struct EveryFormat {
    /// The sample as a PPM (`photo.ppm`), and its size.
    let ppm: URL
    let width: Int
    let height: Int
    /// File name → the format imgfetch reports for it.
    let formats: [String: String]

    init(servedBy server: TestServer) throws {
        let names = try server.addSamples(count: 1, seed: 5)
        let photo = server.root.appendingPathComponent(try XCTUnwrap(names.first { $0.hasSuffix(".jpg") }))
        ppm = server.root.appendingPathComponent("photo.ppm")
        try Self.shell("djpeg -ppm '\(photo.path)' > '\(ppm.path)'", in: server.root)
        let image = try XCTUnwrap(NetpbmImage(Data(contentsOf: ppm)))
        (width, height) = (image.width, image.height)
        for command in [
            "pnmtopng photo.ppm > photo.png",
            "cwebp -quiet -q 80 photo.png -o lossy.webp",
            "cwebp -quiet -lossless photo.png -o lossless.webp",
            "pnmflip -lr photo.ppm | pnmtopng > flipped.png && img2webp -o anim.webp -lossy photo.png flipped.png 2>/dev/null",
            "avifenc -s 10 photo.png photo.avif > /dev/null",
            "ppm2tiff -c lzw photo.tif < photo.ppm || ppm2tiff -c lzw photo.ppm photo.tif",
            "ppmtobmp photo.ppm > photo.bmp 2>/dev/null",
            "pnmquant 256 photo.ppm 2>/dev/null | pamtogif > photo.gif 2>/dev/null",
        ] {
            try Self.shell(command, in: server.root)
        }
        formats = ["lossy.webp": "webp", "lossless.webp": "webp", "anim.webp": "webp", "photo.avif": "avif", "photo.tif": "tiff",
                   "photo.bmp": "bmp", "photo.gif": "gif", "photo.png": "png"]
    }

    /// Runs `command` with bash in `directory`; fails the test on a non-zero exit.
    private static func shell(_ command: String, in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "set -euo pipefail; " + command]
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: command + ": " + text]) }
    }
}
