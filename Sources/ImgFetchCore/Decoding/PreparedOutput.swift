/// A checked body, ready to be placed under its callers' names: the file to place (the body
/// itself, or its decompressed pixels) and what the decoder learned.
struct PreparedOutput {
    let format: ImageFormat
    let image: ImageInfo?
    let file: TempFile
    /// The body's EXIF as a JSON object's text (`DownloaderConfiguration.extractsExif`).
    var exif: String?
}
