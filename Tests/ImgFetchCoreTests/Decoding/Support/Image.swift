import XCTest

/// Decoded test pixels: rows of width × channels bytes.
struct Image: Equatable {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]

    func pixel(_ x: Int, _ y: Int) -> ArraySlice<UInt8> {
        let start = (y * width + x) * channels
        return pixels[start..<start + channels]
    }

    /// The image as the upright view of an EXIF orientation, computed pixel by pixel from the definition.
    func oriented(_ orientation: Int) -> Image {
        let transposed = orientation >= 5
        let outWidth = transposed ? height : width, outHeight = transposed ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                var o = 0
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (width - 1 - x, y)
                        case 3: (sx, sy) = (width - 1 - x, height - 1 - y)
                        case 4: (sx, sy) = (x, height - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, height - 1 - x)
                        case 7: (sx, sy) = (width - 1 - y, height - 1 - x)
                        case 8: (sx, sy) = (width - 1 - y, x)
                        default: (sx, sy) = (x, y)
                        }
                        let s = (sy * width + sx) * channels
                        for c in 0..<channels { target[o + c] = source[s + c] }
                        o += channels
                    }
                }
            }
        }
        return Image(width: outWidth, height: outHeight, channels: channels, pixels: out)
    }

    /// The same pixels without the alpha channel.
    func droppingAlpha() -> Image {
        guard channels == 4 else { return self }
        var out = [UInt8]()
        out.reserveCapacity(width * height * 3)
        for i in stride(from: 0, to: pixels.count, by: 4) { out += pixels[i..<i + 3] }
        return Image(width: width, height: height, channels: 3, pixels: out)
    }

    /// CMYK samples as the codec converts them (Adobe files store them inverted).
    func cmykToRGB(inverted: Bool) -> Image {
        var out = [UInt8]()
        for i in stride(from: 0, to: pixels.count, by: 4) {
            var cmyk = pixels[i..<i + 4].map { Int($0) }
            if !inverted { cmyk = cmyk.map { 255 - $0 } }
            for c in 0..<3 { out.append(UInt8((cmyk[c] * cmyk[3] + 127) / 255)) }
        }
        return Image(width: width, height: height, channels: 3, pixels: out)
    }
}

/// Fails with the first differing pixel rather than dumping two arrays.
func XCTAssertSameImage(_ actual: Image, _ expected: Image, tolerance: Int = 0,
                        file: StaticString = #filePath, line: UInt = #line) {
    guard actual.width == expected.width, actual.height == expected.height, actual.channels == expected.channels else {
        XCTFail("size \(actual.width)×\(actual.height)×\(actual.channels), expected \(expected.width)×\(expected.height)×\(expected.channels)",
                file: file, line: line)
        return
    }
    for i in actual.pixels.indices where abs(Int(actual.pixels[i]) - Int(expected.pixels[i])) > tolerance {
        let pixel = i / actual.channels
        XCTFail("pixel (\(pixel % actual.width), \(pixel / actual.width)) channel \(i % actual.channels): \(actual.pixels[i]), expected \(expected.pixels[i])",
                file: file, line: line)
        return
    }
}
