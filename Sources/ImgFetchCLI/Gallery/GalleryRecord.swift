import ImgFetchCore

/// What the gallery keeps of one list item, from its result to the end of the run: a tile for an
/// image on disk (saved or skipped), or an entry under its error class (failed or cancelled).
///
/// Records are written to disk as the run goes (`GalleryRecordFile`) rather than held, so a run
/// of millions of items keeps no more than one batch of them in memory.
struct GalleryRecord: Equatable {
    var status: DownloadResult.Status
    /// The URL as it may be shown (no password).
    var url: String
    /// The image file's name in the output directory (tiles only; names never contain `/`).
    var fileName = ""
    var format: ImageFormat?
    /// The image's size as saved: the pixels written, or the header's size once oriented.
    var width: Int?
    var height: Int?
    /// Whether the image was decoded in full (false for unverified formats and `--no-decode`).
    var verified = false
    /// SHA-256 of the file's bytes when the result knew it (`DownloadResult.contentHash`).
    var contentHash: String?
    /// The error class and message (failures only).
    var errorClass: DownloadError.Kind?
    var message = ""
    var listName: String
    var line: Int
    var attempts = 0

    /// Images on disk get a tile; everything else is listed under its error class.
    var isTile: Bool { status == .saved || status == .skipped }

    init(status: DownloadResult.Status, url: String, listName: String, line: Int) {
        self.status = status
        self.url = url
        self.listName = listName
        self.line = line
    }

    init(_ item: ItemReport) {
        let result = item.result
        self.init(status: result.status, url: item.displayURL, listName: item.position.listName, line: item.position.line)
        attempts = result.attempts
        if let error = result.error {
            errorClass = error.kind
            message = error.message
        }
        // A saved item has its file; one without (never seen) is listed as a failure rather than lost.
        if isTile, let path = result.paths.first {
            fileName = path.split(separator: "/").last.map(String.init) ?? path
        } else if isTile {
            status = .failed
            errorClass = .filesystem
            message = "no file was reported"
        }
        format = result.format
        if let image = result.image {
            let size = image.outputWidth.flatMap { width in image.outputHeight.map { (width, $0) } } ?? image.displaySize
            (width, height) = (size.0, size.1)
            verified = image.verified
        }
        contentHash = result.contentHash
    }

    // MARK: - Bytes on disk

    /// The fields in order, each a string (empty for nil).
    private var fields: [String] {
        [status.rawValue, url, fileName, format?.rawValue ?? "", width.map(String.init) ?? "", height.map(String.init) ?? "",
         verified ? "1" : "0", contentHash ?? "", errorClass?.rawValue ?? "", message, listName, String(line), String(attempts)]
    }

    private static let fieldCount = 13

    /// Appends the record: each field as a 4-byte little-endian length and its UTF-8 bytes.
    func encode(into bytes: inout [UInt8]) {
        for field in fields {
            let count = UInt32(field.utf8.count)
            bytes += [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8),
                      UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 24)]
            bytes += field.utf8
        }
    }

    /// Reads one record from `bytes` at `offset`, advancing it; nil when the bytes end before a
    /// whole record (the caller reads more) or do not hold one.
    static func decode(_ bytes: UnsafeRawBufferPointer, offset: inout Int) -> GalleryRecord? {
        var position = offset
        var fields: [String] = []
        fields.reserveCapacity(fieldCount)
        for _ in 0..<fieldCount {
            guard bytes.count - position >= 4 else { return nil }
            let count = (0..<4).reduce(0) { $0 | Int(bytes[position + $1]) << (8 * $1) }
            position += 4
            guard bytes.count - position >= count else { return nil }
            fields.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]), as: UTF8.self))
            position += count
        }
        guard let status = DownloadResult.Status(rawValue: fields[0]), let line = Int(fields[11]) else { return nil }
        var record = GalleryRecord(status: status, url: fields[1], listName: fields[10], line: line)
        record.fileName = fields[2]
        record.format = ImageFormat(rawValue: fields[3])
        record.width = Int(fields[4])
        record.height = Int(fields[5])
        record.verified = fields[6] == "1"
        record.contentHash = fields[7].isEmpty ? nil : fields[7]
        record.errorClass = DownloadError.Kind(rawValue: fields[8])
        record.message = fields[9]
        record.attempts = Int(fields[12]) ?? 0
        offset = position
        return record
    }
}
