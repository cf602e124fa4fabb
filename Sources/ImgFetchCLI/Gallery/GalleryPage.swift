import ImgFetchCore

/// Writes the gallery page from top to bottom as its parts become known, keeping nothing: the
/// summary, the tiles in blocks, then the failures grouped by error class (each a closed
/// `<details>`): the first screen shows images, however many items failed.
/// Every piece of input text goes through `HTMLText.escape`, every link through `GalleryLinks`.
final class GalleryPage {
    private let file: GalleryPageFile
    private let links: GalleryLinks
    private var tilesInBlock = 0

    /// Tiles per grid block: the unit the browser skips while it is off screen.
    static let tilesPerBlock = 500
    /// A tile's name is cut in the middle past this many characters (about a tile's width), so
    /// names that share a start still differ on screen; the whole name is its title.
    static let nameWidth = 26

    init(file: GalleryPageFile, links: GalleryLinks) {
        self.file = file
        self.links = links
    }

    /// The document head and the run's summary.
    func begin(summary: RunSummary, images: Int) {
        file.write("""
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="imgfetch \(HTMLText.escape(DownloaderConfiguration.version))">
            <title>imgfetch gallery: \(images) image\(images == 1 ? "" : "s")</title>
            <style>
            \(GalleryStyle.css)
            </style>
            </head>
            <body>
            <header>
            <h1>imgfetch gallery</h1>
            <p class="summary" id="summary">\(HTMLText.escape(summary.line))</p>
            <ul class="counts">\(counts(summary))</ul>
            </header>

            """)
    }

    private func counts(_ summary: RunSummary) -> String {
        // The failures are below the images: their count links to them.
        let failed = summary.failed > 0 ? "<li class=\"failed\"><a href=\"#failures\">\(summary.failed) failed</a></li>"
            : "<li>0 failed</li>"
        var parts = ["<li>\(summary.items) items</li>", "<li>\(summary.saved) saved</li>", "<li>\(summary.skipped) skipped</li>", failed]
        if summary.cancelled > 0 { parts.append("<li class=\"failed\">\(summary.cancelled) cancelled</li>") }
        if summary.unverified > 0 { parts.append("<li>\(summary.unverified) unverified</li>") }
        return parts.joined()
    }

    // MARK: - Failures

    func beginFailures(count: Int) {
        file.write("<section id=\"failures\">\n<h2>Failures <span class=\"n\">(\(count))</span></h2>\n")
    }

    /// Opens the group of one error class, closed: its summary line gives the class and the count.
    func beginClass(_ kind: DownloadError.Kind, count: Int) {
        let name = HTMLText.escape(kind.rawValue)
        file.write("<details class=\"class\" id=\"class-\(name)\" data-class=\"\(name)\">"
            + "<summary>\(name) <span class=\"n\">(\(count))</span></summary>\n<ol>\n")
    }

    func failure(_ record: GalleryRecord) {
        let tries = record.attempts > 1 ? " (after \(record.attempts) attempts)" : ""
        let url = record.url.isEmpty ? "" : "<span class=\"url\"><bdi>\(HTMLText.escape(record.url))</bdi></span>"
        file.write("<li><span class=\"reason\">\(HTMLText.escape(record.message + tries))</span>\(url)"
            + "<span class=\"where\">\(HTMLText.escape(record.listName)):\(record.line)</span></li>\n")
    }

    func endClass() {
        file.write("</ol></details>\n")
    }

    func endFailures() {
        file.write("</section>\n")
    }

    // MARK: - Images

    func beginImages(count: Int) {
        file.write("<section id=\"images\">\n<h2>Images <span class=\"n\">(\(count))</span></h2>\n")
        tilesInBlock = 0
    }

    func tile(_ record: GalleryRecord, _ preview: TilePreview) {
        if tilesInBlock == 0 { file.write("<div class=\"grid\">\n") }
        let name = HTMLText.escape(record.fileName)
        let href = links.image(record.fileName)
        var html = "<figure class=\"tile\" data-status=\"\(record.status.rawValue)\" title=\"\(HTMLText.escape(record.url))\">"
        if let thumbnail = preview.thumbnail {
            let source = links.thumbnail(thumbnail.path.split(separator: "/").last.map(String.init) ?? thumbnail.path)
            html += "<a class=\"frame\" href=\"\(href)\"><img src=\"\(source)\" width=\"\(thumbnail.width)\" "
                + "height=\"\(thumbnail.height)\" loading=\"lazy\" decoding=\"async\" alt=\"\(name)\"></a>"
        } else {
            let label = HTMLText.escape(record.format?.displayName ?? "?")
            let problem = HTMLText.escape(preview.problem ?? "no preview")
            html += "<a class=\"frame ph\" href=\"\(href)\" title=\"\(problem)\"><b>\(label)</b><span>\(problem)</span></a>"
        }
        let shown = HTMLText.escape(TerminalText.middleTruncated(record.fileName, toWidth: Self.nameWidth))
        html += "<figcaption><a class=\"name\" href=\"\(href)\" title=\"\(name)\"><bdi>\(shown)</bdi></a>"
            + "<span class=\"meta\">\(meta(record, preview))</span></figcaption></figure>\n"
        file.write(html)
        tilesInBlock += 1
        if tilesInBlock == Self.tilesPerBlock { endBlock() }
    }

    /// `640 × 427 · 52.1 KiB · JPEG`, and badges for what is not plain.
    private func meta(_ record: GalleryRecord, _ preview: TilePreview) -> String {
        var parts: [String] = []
        if let width = record.width, let height = record.height { parts.append("\(width) × \(height)") }
        parts.append(preview.fileSize.map(ByteCount.format) ?? "missing")
        if let format = record.format { parts.append(format.displayName) }
        var text = parts.joined(separator: " · ")
        if !record.verified { text += "<span class=\"badge\">unverified</span>" }
        if record.status == .skipped { text += "<span class=\"badge\">skipped</span>" }
        return text
    }

    private func endBlock() {
        if tilesInBlock > 0 { file.write("</div>\n") }
        tilesInBlock = 0
    }

    func endImages() {
        endBlock()
        file.write("</section>\n")
    }

    func end() {
        file.write("</body>\n</html>\n")
    }
}
