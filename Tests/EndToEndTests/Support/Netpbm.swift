import Foundation

/// A decoded PGM (P5), PPM (P6) or PAM (P7) file: size, channels, the largest sample value (255 or
/// 65535) and the raw samples as stored (16-bit ones big-endian).
struct NetpbmImage: Equatable {
    let width: Int
    let height: Int
    let depth: Int
    var maxval = 255
    let pixels: Data

    /// Parses P6 (`P6 W H 255` then RGB) and P7 (`WIDTH/HEIGHT/DEPTH/MAXVAL/TUPLTYPE … ENDHDR`).
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        var index = 0
        func token() -> String? {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x09 || bytes[index] == 0x0D { index += 1 }
            let start = index
            while index < bytes.count, !(bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x09 || bytes[index] == 0x0D) { index += 1 }
            return start < index ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }
        switch token() {
        case let magic where magic == "P5" || magic == "P6":
            guard let w = token().flatMap(Int.init), let h = token().flatMap(Int.init),
                  let max = token().flatMap(Int.init), max == 255 || max == 65535 else { return nil }
            width = w
            height = h
            depth = magic == "P5" ? 1 : 3
            maxval = max
        case "P7":
            var fields: [String: String] = [:]
            while let key = token(), key != "ENDHDR" { fields[key] = token() }
            guard let w = fields["WIDTH"].flatMap(Int.init), let h = fields["HEIGHT"].flatMap(Int.init),
                  let d = fields["DEPTH"].flatMap(Int.init),
                  let max = fields["MAXVAL"].flatMap(Int.init), max == 255 || max == 65535 else { return nil }
            width = w
            height = h
            depth = d
            maxval = max
        default:
            return nil
        }
        index += 1  // the single whitespace byte before the samples
        guard bytes.count - index == width * height * depth * (maxval == 255 ? 1 : 2) else { return nil }
        pixels = Data(bytes[index...])
    }

    /// The same pixels without the alpha channel (RGBA → RGB).
    var rgb: NetpbmImage {
        guard depth == 4 else { return self }
        var out = Data(capacity: width * height * 3)
        for offset in stride(from: 0, to: pixels.count, by: 4) { out.append(pixels[pixels.startIndex + offset..<pixels.startIndex + offset + 3]) }
        return NetpbmImage(width: width, height: height, depth: 3, pixels: out)
    }

    init(width: Int, height: Int, depth: Int, maxval: Int = 255, pixels: Data) {
        self.width = width
        self.height = height
        self.depth = depth
        self.maxval = maxval
        self.pixels = pixels
    }

    /// Runs a reference decoder (`djpeg`, `pngtopam`, `dwebp` …) on `file` and parses its output.
    static func reference(_ tool: String, _ arguments: [String], file: URL) throws -> NetpbmImage? {
        NetpbmImage(try standardOutput(of: "/usr/bin/env", [tool] + arguments + [file.path]))
    }
}
