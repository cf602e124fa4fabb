import CImageCodec
import Glibc

/// One streaming decode through CImageCodec: header on init, then the first frame's rows, then the
/// trailer and any later frames.
/// Owns the C decoder and the file descriptor it opened (none for an in-memory source or a
/// caller's descriptor); used by one thread at a time.
final class ImageDecoder {
    /// The rows `start` set up.
    struct Output {
        var width: Int
        var height: Int
        var layout: PixelLayout
        /// Adam7 passes (7 for interlaced PNG): every pass delivers `height` rows.
        var passes: Int

        var channels: Int { layout.channels }
        var rowBytes: Int { layout.rowBytes(width: width) }
    }

    let format: ImageFormat
    /// What the decoder refuses; also bounds what a conversion may upscale to.
    let limits: DecodeLimits
    /// The header, read by `init`.
    let info: ImageInfo
    /// Whether the stored image has an alpha channel or tRNS.
    let hasAlpha: Bool
    /// Progressive JPEG or interlaced PNG.
    let isProgressive: Bool
    /// Bytes the C decoder will hold while verifying (the header's estimate; see `DecodeMemoryBudget`).
    let decodeMemory: Int
    /// Bytes it will hold while decoding pixels.
    let convertMemory: Int
    private let handle: OpaquePointer
    /// The descriptor this decoder opened (and closes); -1 for memory and for a caller's descriptor.
    private let ownedFD: Int32
    private(set) var output = Output(width: 0, height: 0, layout: PixelLayout(channels: 0, bitDepth: 8), passes: 1)

    /// Opens `path` and reads its header; throws when the header is invalid or exceeds `limits`.
    convenience init(path: String, format: ImageFormat, limits: DecodeLimits) throws(DownloadError) {
        try self.init(source: .file(path: path), format: format, limits: limits)
    }

    /// Reads the header from `source`; throws when it is invalid or exceeds `limits`. A memory
    /// source must outlive the decoder.
    init(source: ImageSource, format: ImageFormat, limits: DecodeLimits) throws(DownloadError) {
        let codecFormat = try Self.codecFormat(format)
        self.format = format
        self.limits = limits
        var descriptor: Int32 = -1
        switch source {
        case .file(let path):
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw DownloadError(.filesystem, "cannot open \(path): \(Errno.describe())")
            }
            ownedFD = descriptor
        case .descriptor(let given):
            // The C source reads sequentially from the offset it finds.
            guard lseek(given, 0, SEEK_SET) == 0 else {
                throw DownloadError(.filesystem, "cannot read the image file: \(Errno.describe())")
            }
            descriptor = given
            ownedFD = -1
        case .memory:
            ownedFD = -1
        }
        var cLimits = limits.codecLimits
        var header = imgcodec_header()
        var decoder: OpaquePointer?
        do {
            switch source {
            case .file, .descriptor:
                try CodecCall.run { imgcodec_decoder_open(descriptor, codecFormat, &cLimits, &decoder, &header, $0, $1) }
            case .memory(let bytes):
                let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                try CodecCall.run { imgcodec_decoder_open_memory(base, bytes.count, codecFormat, &cLimits, &decoder, &header, $0, $1) }
            }
        } catch {
            imgcodec_decoder_close(decoder)
            if ownedFD >= 0 { close(ownedFD) }
            throw error
        }
        handle = decoder!
        info = ImageInfo(header: header, verified: false)
        hasAlpha = header.has_alpha != 0
        isProgressive = header.progressive != 0
        decodeMemory = Int(clamping: header.decode_memory)
        convertMemory = Int(clamping: header.convert_memory)
    }

    deinit {
        imgcodec_decoder_close(handle)
        if ownedFD >= 0 { close(ownedFD) }
    }

    /// Decodes every row (every scan) and the trailer in the cheapest layout, keeping nothing: verification.
    func verifyAll() throws(DownloadError) {
        try CodecCall.run { imgcodec_decoder_verify(handle, $0, $1) }
    }

    /// Starts decompression to rows of the source's channels and depth (see `PixelLayout`); JPEGs are
    /// DCT-scaled by `scaleNumerator`/8 (1...8).
    func start(scaleNumerator: Int = 8) throws(DownloadError) {
        var out = imgcodec_output()
        try CodecCall.run { imgcodec_decoder_start(handle, Int32(IMGCODEC_MODE_PIXELS), Int32(scaleNumerator), &out, $0, $1) }
        output = Output(width: Int(out.width), height: Int(out.height),
                        layout: PixelLayout(channels: Int(out.channels), bitDepth: Int(out.bit_depth)), passes: Int(out.passes))
    }

    /// Decodes the next row into `row` (`output.rowBytes` bytes). For interlaced PNG see `Output.passes`.
    func readRow(into row: UnsafeMutablePointer<UInt8>) throws(DownloadError) {
        try CodecCall.run { imgcodec_decoder_read_row(handle, row, $0, $1) }
    }

    /// Reads the rest of the file (trailing markers or chunks, their CRCs, EOI or IEND) and decodes
    /// every later frame or page.
    func finish() throws(DownloadError) {
        try CodecCall.run { imgcodec_decoder_finish(handle, $0, $1) }
    }

    /// Whether libpng writes pixels of row `y` during Adam7 `pass`.
    func rowInPass(_ y: Int, pass: Int) -> Bool {
        imgcodec_png_row_in_pass(UInt32(y), UInt32(output.width), Int32(pass)) != 0
    }

    /// CImageCodec's constant for a format it decodes.
    static func codecFormat(_ format: ImageFormat) throws(DownloadError) -> Int32 {
        switch format {
        case .jpeg: Int32(IMGCODEC_FORMAT_JPEG)
        case .png: Int32(IMGCODEC_FORMAT_PNG)
        case .webp: Int32(IMGCODEC_FORMAT_WEBP)
        case .gif: Int32(IMGCODEC_FORMAT_GIF)
        case .avif: Int32(IMGCODEC_FORMAT_AVIF)
        case .tiff: Int32(IMGCODEC_FORMAT_TIFF)
        case .bmp: Int32(IMGCODEC_FORMAT_BMP)
        default: throw DownloadError(.notAnImage, "unsupported: \(format.displayName) images are not decoded")
        }
    }
}

extension ImageInfo {
    init(header: imgcodec_header, verified: Bool) {
        self.init(width: Int(header.width), height: Int(header.height), channels: Int(header.channels),
                  bitDepth: Int(header.bit_depth), orientation: Int(header.orientation), verified: verified)
    }
}

extension DecodeLimits {
    /// The C form; values beyond what C holds are clamped, 0 means no limit.
    var codecLimits: imgcodec_limits {
        func clamp32(_ value: Int) -> UInt32 { UInt32(clamping: max(0, value)) }
        return imgcodec_limits(max_pixels: UInt64(max(0, maxPixels)), max_width: clamp32(maxWidth),
                               max_height: clamp32(maxHeight), max_scans: clamp32(maxScans),
                               max_memory: UInt64(max(0, maxMemory)), max_frames: clamp32(maxFrames),
                               max_total_pixels: UInt64(max(0, maxTotalPixels)), cancel: cancellation?.flag)
    }
}
