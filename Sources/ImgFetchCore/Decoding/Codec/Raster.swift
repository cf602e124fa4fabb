/// A width × height pixel store (pixelBytes bytes a pixel) written and read by rows and row segments: in memory
/// when it fits `memoryBudget`, otherwise in a `ScratchFile`, so huge images never sit in RAM.
/// New rasters read as zeros.
final class Raster {
    let width: Int
    let height: Int
    let pixelBytes: Int
    private let memory: UnsafeMutableRawBufferPointer?
    private let file: ScratchFile?

    var rowBytes: Int { width * pixelBytes }
    /// Whether the pixels live on disk rather than in memory.
    var isOnDisk: Bool { file != nil }

    init(width: Int, height: Int, pixelBytes: Int, memoryBudget: Int, scratchDirectory: String) throws(DownloadError) {
        self.width = width
        self.height = height
        self.pixelBytes = pixelBytes
        let size = width * height * pixelBytes
        if size <= memoryBudget {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, size), alignment: 16)
            memory.initializeMemory(as: UInt8.self, repeating: 0)
            self.memory = memory
            file = nil
        } else {
            let file = try ScratchFile(directory: scratchDirectory)
            try file.resize(to: size)
            self.file = file
            memory = nil
        }
    }

    deinit {
        memory?.deallocate()
    }

    /// Stores row `y` from `row` (rowBytes bytes).
    func write(row y: Int, from row: UnsafePointer<UInt8>) throws(DownloadError) {
        try write(row: y, pixel: 0, count: width, from: row)
    }

    /// Stores `count` pixels of row `y` starting at column `x`.
    func write(row y: Int, pixel x: Int, count: Int, from pixels: UnsafePointer<UInt8>) throws(DownloadError) {
        let offset = (y * width + x) * pixelBytes
        if let memory {
            memory.baseAddress!.advanced(by: offset).copyMemory(from: pixels, byteCount: count * pixelBytes)
        } else {
            try file!.write(pixels, count: count * pixelBytes, at: offset)
        }
    }

    /// Loads row `y` into `row` (rowBytes bytes).
    func read(row y: Int, into row: UnsafeMutablePointer<UInt8>) throws(DownloadError) {
        try read(row: y, pixel: 0, count: width, into: row)
    }

    /// Loads `count` pixels of row `y` starting at column `x`.
    func read(row y: Int, pixel x: Int, count: Int, into pixels: UnsafeMutablePointer<UInt8>) throws(DownloadError) {
        let offset = (y * width + x) * pixelBytes
        if let memory {
            UnsafeMutableRawPointer(pixels).copyMemory(from: memory.baseAddress!.advanced(by: offset), byteCount: count * pixelBytes)
        } else {
            try file!.read(into: pixels, count: count * pixelBytes, at: offset)
        }
    }
}
