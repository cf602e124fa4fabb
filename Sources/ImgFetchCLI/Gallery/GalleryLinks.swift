/// The relative links of one gallery page: from the page's directory to the output directory's
/// images and to their thumbnails, as `href`/`src` values that work from `file://`.
struct GalleryLinks: Equatable {
    /// Segments from the page's directory to the output directory (empty when they are the same).
    let toOutput: [String]
    /// Segments from the page's directory to the thumbnails' directory.
    let toThumbnails: [String]

    /// Links from the page `pageDirectory` (absolute, resolved) to `outputDirectory` (likewise)
    /// and `thumbnailDirectory` (absolute; it may not exist yet).
    init(pageDirectory: String, outputDirectory: String, thumbnailDirectory: String) {
        toOutput = RelativePath.segments(from: pageDirectory, to: outputDirectory)
        toThumbnails = RelativePath.segments(from: pageDirectory, to: thumbnailDirectory)
    }

    /// The link to the image `fileName` of the output directory.
    func image(_ fileName: String) -> String {
        HTMLText.href(toOutput + [fileName])
    }

    /// The link to the thumbnail file `fileName` (`HASH.png`).
    func thumbnail(_ fileName: String) -> String {
        HTMLText.href(toThumbnails + [fileName])
    }
}
