import Foundation

/// What the lossy outputs' tests share: a smooth test picture and the PSNR between two images.
extension PNGSample {
    /// A smooth gradient, 64 × 48 (photographs are smooth; noise is what JPEG and WebP are worst at).
    static func gradient(_ colorType: ColorType, bitDepth: Int) -> PNGSample {
        var sample = PNGSample(colorType, bitDepth: bitDepth, width: 64, height: 48)
        let channels = colorType.samplesPerPixel
        var rows: [UInt8] = []
        for y in 0..<sample.height {
            for x in 0..<sample.width {
                for channel in 0..<channels {
                    // Each channel a different slow ramp; 0...1.
                    let value = (Double(x) / 63 * Double(channel + 1) + Double(y) / 47 * Double(channels - channel)) / Double(channels + 1)
                    if bitDepth == 16 {
                        let wide = Int(value * 65535)
                        rows += [UInt8(wide >> 8), UInt8(wide & 0xFF)]
                    } else {
                        rows.append(UInt8(value * 255))
                    }
                }
            }
        }
        sample.rows = rows
        if colorType == .palette {
            // Entry i a gray-ish ramp, so that neighbouring indices are neighbouring colors.
            sample.palette = (0..<256).flatMap { [UInt8($0), UInt8(255 - $0), UInt8($0 / 2)] }
        }
        return sample
    }
}

/// Peak signal-to-noise ratio of 8-bit samples `a` against `b`, in dB (infinite when equal).
func psnr(_ a: [Int], _ b: [Int]) -> Double {
    let squared = zip(a, b).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) } / Double(max(1, a.count))
    return squared == 0 ? .infinity : 10 * log10(255 * 255 / squared)
}
