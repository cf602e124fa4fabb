/// Parses the binary PPM (P6) and PAM (P7) files the codec writes.
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
        var width = 0, height = 0, channels = 3
        switch try line() {
        case "P6":
            let size = try line().split(separator: " ").compactMap { Int($0) }
            guard size.count == 2, try line() == "255" else { throw Malformed() }
            (width, height) = (size[0], size[1])
        case "P7":
            var fields: [String: String] = [:]
            while case let text = try line(), text != "ENDHDR" {
                let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw Malformed() }
                fields[parts[0]] = parts[1]
            }
            guard let w = fields["WIDTH"].flatMap(Int.init), let h = fields["HEIGHT"].flatMap(Int.init),
                  let depth = fields["DEPTH"].flatMap(Int.init), fields["MAXVAL"] == "255",
                  fields["TUPLTYPE"] == (depth == 4 ? "RGB_ALPHA" : "RGB") else { throw Malformed() }
            (width, height, channels) = (w, h, depth)
        default:
            throw Malformed()
        }
        let pixels = Array(bytes[offset...])
        guard pixels.count == width * height * channels else { throw Malformed() }
        return Image(width: width, height: height, channels: channels, pixels: pixels)
    }
}
