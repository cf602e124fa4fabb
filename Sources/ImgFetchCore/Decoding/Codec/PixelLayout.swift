/// How decoded rows are laid out: `channels` samples a pixel (1 gray, 2 gray + alpha, 3 RGB,
/// 4 RGBA; alpha last and not premultiplied), each 8 bits or 16 bits in native byte order. The
/// conversion stages keep the source's layout, so that a PNG or PAM output is lossless.
struct PixelLayout: Equatable {
    var channels: Int
    /// 8 or 16.
    var bitDepth: Int

    var bytesPerSample: Int { bitDepth == 16 ? 2 : 1 }
    var pixelBytes: Int { channels * bytesPerSample }
    /// Whether the last channel is alpha.
    var hasAlpha: Bool { channels == 2 || channels == 4 }
    /// The largest sample value.
    var maxSample: Int { bitDepth == 16 ? 65535 : 255 }

    func rowBytes(width: Int) -> Int { width * pixelBytes }
}
