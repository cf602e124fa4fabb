import Dispatch
import Glibc
import ImgFetchCore

/// What a tile shows for its image: a thumbnail, or a placeholder and the reason.
struct TilePreview: Equatable {
    var thumbnail: Thumbnail?
    /// Why there is no thumbnail (an unverified format, a file that does not decode or is gone).
    var problem: String?
    /// The image file's size on disk; nil when it cannot be read.
    var fileSize: Int64?
}

/// Makes the previews of one batch of tiles, on every core at once (the run's transfers are over
/// by then, so nothing waits for the CPU). A thumbnail that fails only costs its tile a
/// placeholder: it never fails the page, the item or the run.
struct ThumbnailBatch {
    /// The thumbnailer, or why there is none (its directory cannot be created): every tile then
    /// shows a placeholder.
    let thumbnailer: Result<Thumbnailer, DownloadError>
    let outputDirectory: String

    func previews(for records: [GalleryRecord]) -> [TilePreview] {
        var previews = [TilePreview](repeating: TilePreview(), count: records.count)
        previews.withUnsafeMutableBufferPointer { slots in
            // Each iteration writes its own slot only, and the call returns after the last one.
            nonisolated(unsafe) let base = slots.baseAddress!
            DispatchQueue.concurrentPerform(iterations: records.count) { index in
                base[index] = preview(for: records[index])
            }
        }
        return previews
    }

    func preview(for record: GalleryRecord) -> TilePreview {
        let path = OutputPaths.join(outputDirectory, record.fileName)
        var preview = TilePreview()
        var info = stat()
        if stat(path, &info) == 0 { preview.fileSize = Int64(info.st_size) }
        if let format = record.format, !format.isDecodable {
            preview.problem = "no preview: imgfetch cannot decode \(format.displayName)"
            return preview
        }
        switch thumbnailer.flatMap({ $0.thumbnail(of: path, contentHash: record.contentHash) }) {
        case .success(let thumbnail): preview.thumbnail = thumbnail
        case .failure(let error): preview.problem = error.message
        }
        return preview
    }
}
