/// A deliberately naive area-averaging downscale, straight from the definition (each output pixel
/// is the coverage-weighted mean of the source area it spans; colors weighted by alpha), to check
/// `BoxDownscaler` against.
func boxReference(_ image: Image, width: Int, height: Int) -> Image {
    let scaleX = Double(image.width) / Double(width), scaleY = Double(image.height) / Double(height)
    var out = [Int]()
    let alphaChannel = image.channels == 2 || image.channels == 4 ? image.channels - 1 : -1
    for y in 0..<height {
        for x in 0..<width {
            let x0 = Double(x) * scaleX, x1 = Double(x + 1) * scaleX
            let y0 = Double(y) * scaleY, y1 = Double(y + 1) * scaleY
            var sums = [Double](repeating: 0, count: image.channels)
            var area = 0.0
            for sy in Int(y0)..<min(image.height, Int(y1.rounded(.up))) {
                let coverY = min(y1, Double(sy + 1)) - max(y0, Double(sy))
                for sx in Int(x0)..<min(image.width, Int(x1.rounded(.up))) {
                    let weight = coverY * (min(x1, Double(sx + 1)) - max(x0, Double(sx)))
                    let pixel = image.pixel(sx, sy).map(Double.init)
                    let alpha = alphaChannel >= 0 ? pixel[alphaChannel] : 1
                    for c in 0..<image.channels {
                        sums[c] += weight * (alphaChannel >= 0 && c != alphaChannel ? pixel[c] * alpha : pixel[c])
                    }
                    area += weight
                }
            }
            if alphaChannel >= 0 {
                let alphaSum = sums[alphaChannel]
                for c in 0..<alphaChannel { out.append(alphaSum > 0 ? Int((sums[c] / alphaSum).rounded()) : 0) }
                out.append(Int((alphaSum / area).rounded()))
            } else {
                out += sums.map { Int(($0 / area).rounded()) }
            }
        }
    }
    return Image(width: width, height: height, channels: image.channels, bitDepth: image.bitDepth, samples: out)
}
