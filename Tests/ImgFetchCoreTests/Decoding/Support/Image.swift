import XCTest

/// Decoded test pixels laid out as the codec's rows are: width × channels samples a row, each one
/// byte, or two in native byte order when `bitDepth` is 16.
struct Image: Equatable {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]
    var bitDepth = 8

    init(width: Int, height: Int, channels: Int, pixels: [UInt8], bitDepth: Int = 8) {
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
        self.bitDepth = bitDepth
    }

    /// An image from its samples (0...255, or 0...65535 when `bitDepth` is 16).
    init(width: Int, height: Int, channels: Int, bitDepth: Int, samples: [Int]) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * (bitDepth == 16 ? 2 : 1))
        for sample in samples {
            if bitDepth == 16 {
                withUnsafeBytes(of: UInt16(sample)) { bytes += $0 }
            } else {
                bytes.append(UInt8(sample))
            }
        }
        self.init(width: width, height: height, channels: channels, pixels: bytes, bitDepth: bitDepth)
    }

    var bytesPerSample: Int { bitDepth == 16 ? 2 : 1 }
    var pixelBytes: Int { channels * bytesPerSample }

    /// Every sample, in order.
    var samples: [Int] {
        guard bitDepth == 16 else { return pixels.map(Int.init) }
        return stride(from: 0, to: pixels.count, by: 2).map { i in
            pixels.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: i, as: UInt16.self)) }
        }
    }

    /// The samples of pixel (x, y).
    func pixel(_ x: Int, _ y: Int) -> [Int] {
        let start = (y * width + x) * pixelBytes
        return Image(width: 1, height: 1, channels: channels, pixels: Array(pixels[start..<start + pixelBytes]), bitDepth: bitDepth).samples
    }

    /// The `width` × `height` part whose top-left pixel is (`x`, `y`).
    func cropped(x: Int, y: Int, width: Int, height: Int) -> Image {
        var out: [UInt8] = []
        for row in y..<(y + height) {
            let start = (row * self.width + x) * pixelBytes
            out += pixels[start..<start + width * pixelBytes]
        }
        return Image(width: width, height: height, channels: channels, pixels: out, bitDepth: bitDepth)
    }

    /// The image as the upright view of an EXIF orientation, computed pixel by pixel from the definition.
    func oriented(_ orientation: Int) -> Image {
        let transposed = orientation >= 5
        let outWidth = transposed ? height : width, outHeight = transposed ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        let channels = pixelBytes
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
        return Image(width: outWidth, height: outHeight, channels: self.channels, pixels: out, bitDepth: bitDepth)
    }

    /// The pixels as a PPM holds them: RGB (gray repeated, alpha dropped) at the same depth.
    func asRGB() -> Image {
        guard channels != 3 else { return self }
        let all = samples
        var out = [Int]()
        out.reserveCapacity(width * height * 3)
        for i in stride(from: 0, to: all.count, by: channels) {
            out += channels <= 2 ? [all[i], all[i], all[i]] : Array(all[i..<i + 3])
        }
        return Image(width: width, height: height, channels: 3, bitDepth: bitDepth, samples: out)
    }

    /// Gray (+ alpha) from an RGB(A) image whose color channels are equal: the G channel, and alpha.
    func grayFromRGB() -> Image {
        let all = samples
        var out = [Int]()
        for i in stride(from: 0, to: all.count, by: channels) {
            out.append(all[i + 1])
            if channels == 4 { out.append(all[i + 3]) }
        }
        return Image(width: width, height: height, channels: channels == 4 ? 2 : 1, bitDepth: bitDepth, samples: out)
    }

    /// Only the first channel (gray from an RGB image whose channels are equal).
    func firstChannel() -> Image {
        let all = samples
        return Image(width: width, height: height, channels: 1, bitDepth: bitDepth,
                     samples: stride(from: 0, to: all.count, by: channels).map { all[$0] })
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
    guard actual.width == expected.width, actual.height == expected.height, actual.channels == expected.channels,
          actual.bitDepth == expected.bitDepth else {
        XCTFail("size \(actual.width)×\(actual.height)×\(actual.channels) at \(actual.bitDepth) bits, expected "
                + "\(expected.width)×\(expected.height)×\(expected.channels) at \(expected.bitDepth) bits", file: file, line: line)
        return
    }
    let (got, want) = (actual.samples, expected.samples)
    for i in got.indices where abs(got[i] - want[i]) > tolerance {
        let pixel = i / actual.channels
        XCTFail("pixel (\(pixel % actual.width), \(pixel / actual.width)) channel \(i % actual.channels): \(got[i]), expected \(want[i])",
                file: file, line: line)
        return
    }
}
