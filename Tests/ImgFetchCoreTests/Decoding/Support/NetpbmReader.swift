/// Parses binary PGM (P5), PPM (P6) and PAM (P7) files, as the codec and the reference decoders
/// write them, into an `Image` (16-bit samples in native byte order).
enum NetpbmReader {
    struct Malformed: Error {}

    static func read(_ bytes: [UInt8]) throws -> Image {
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P") else { throw Malformed() }
        var offset = 0
        func line() throws -> String {
            guard let end = bytes[offset...].firstIndex(of: 0x0A) else { throw Malformed() }
            defer { offset = end + 1 }
            return String(decoding: bytes[offset..<end], as: UTF8.self)
        }
        var width = 0, height = 0, channels = 3, maxval = 255
        switch try line() {
        case let magic where magic == "P5" || magic == "P6":
            var size = try line().split(separator: " ").compactMap { Int($0) }
            while size.count < 3 { size += try line().split(separator: " ").compactMap { Int($0) } }
            guard size.count == 3, size[2] == 255 || size[2] == 65535 else { throw Malformed() }
            (width, height, maxval) = (size[0], size[1], size[2])
            channels = magic == "P5" ? 1 : 3
        case "P7":
            var fields: [String: String] = [:]
            while case let text = try line(), text != "ENDHDR" {
                let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw Malformed() }
                fields[parts[0]] = parts[1]
            }
            let tuples = ["GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA"]
            guard let w = fields["WIDTH"].flatMap(Int.init), let h = fields["HEIGHT"].flatMap(Int.init),
                  let depth = fields["DEPTH"].flatMap(Int.init), (1...4).contains(depth),
                  let max = fields["MAXVAL"].flatMap(Int.init), max == 255 || max == 65535,
                  fields["TUPLTYPE"] == tuples[depth - 1] else { throw Malformed() }
            (width, height, channels, maxval) = (w, h, depth, max)
        default:
            throw Malformed()
        }
        let pixels = Array(bytes[offset...])
        let sampleBytes = maxval == 65535 ? 2 : 1
        guard pixels.count == width * height * channels * sampleBytes else { throw Malformed() }
        guard sampleBytes == 2 else { return Image(width: width, height: height, channels: channels, pixels: pixels) }
        let samples = stride(from: 0, to: pixels.count, by: 2).map { Int(pixels[$0]) << 8 | Int(pixels[$0 + 1]) }
        return Image(width: width, height: height, channels: channels, bitDepth: 16, samples: samples)
    }
}
