import Foundation
import XCTest

/// The images of `Scripts/test-support/gallery_fixtures.py` (a JPEG with EXIF orientation, PNGs with alpha and
/// 16-bit samples, WebP, GIF, an SVG and a broken JPEG), made once per test process and copied
/// into each test's server directory.
enum GalleryFixtures {
    /// The names the script wrote, in its order.
    static let names = ["sunset.jpg", "portrait.jpg", "rings.png", "deep.png", "tall.png", "waves.webp", "tiles.gif",
                        "badge.svg", "broken.jpg"]

    /// A file name with markup, quotes and a comment opener (no `/`: names cannot hold one).
    static let hostileName = "<script>alert(\"x\")<!--'&amp;.jpg"

    private static let made: Result<URL, Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-gallery-fixtures-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestServer.packageRoot.appendingPathComponent("Scripts/test-support/gallery_fixtures.py").path, directory.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, printed.split(separator: "\n").map(String.init) == names else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "gallery_fixtures.py failed: \(printed)"])
        }
        return directory
    }

    /// Copies every fixture into `directory` (a test server's root).
    static func copy(into directory: URL) throws {
        let source = try made.get()
        for name in names {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: directory.appendingPathComponent(name))
        }
    }
}

extension EndToEndTestCase {
    /// The fixtures, a 404, a 404 whose URL carries markup, a copy under a hostile name, and a
    /// bad line; the fixtures are copied to the server first.
    func galleryList() throws -> [String] {
        try GalleryFixtures.copy(into: server.root)
        return GalleryFixtures.names.map { server.url("/files/" + $0) } + [
            server.url("/status/404"),
            server.url("/status/404?q=<script>alert(1)</script>"),
            server.url("/files/sunset.jpg") + " out=" + GalleryFixtures.hostileName,
            "ftp://example.com/<b>x</b>.png",
        ]
    }

    /// Runs imgfetch in the scratch directory with relative paths, as a user would type them:
    /// `imgfetch urls.txt -o out --gallery pages/gallery.html …`.
    func runWithGallery(_ lines: [String], _ extra: [String] = []) throws -> Execution {
        _ = try scratch.write("urls.txt", lines.joined(separator: "\n") + "\n")
        try FileManager.default.createDirectory(at: scratch.file("pages"), withIntermediateDirectories: true)
        return try ImgFetchRunner.run(["urls.txt", "-o", "out", "--gallery", "pages/gallery.html"] + extra, in: scratch.url)
    }

    /// The page `runWithGallery` writes.
    var pagePath: String { scratch.file("pages/gallery.html").path }
}

/// A gallery page as Python's `html.parser` reads it: an HTML parser independent of the code that
/// wrote the page, so that what a browser would see is checked, not what the writer meant.
struct ParsedGallery: Decodable {
    struct Tile: Decodable {
        struct Image: Decodable {
            let src: String
            let width: Int
            let height: Int
            let loading: String?
        }

        let status: String?
        let title: String?
        let href: String?
        let img: Image?
        /// The placeholder's title (why there is no thumbnail); nil for a thumbnail.
        let placeholder: String?
        /// The file's whole name (the name link's title).
        let name: String
        /// The name as the tile shows it: cut in the middle when long.
        let shown: String
        let meta: String
    }

    struct Failure: Decodable {
        let reason: String
        let url: String
        let `where`: String
    }

    let tiles: [Tile]
    /// Failures by error class, in page order.
    let failures: [String: [Failure]]
    let classOrder: [String]
    let summary: String?
    /// `<script>` elements, `on…` event attributes, and every href/src on the page.
    let scripts: Int
    let handlers: [String]
    let links: [String]

    static func parse(_ page: String) throws -> ParsedGallery {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, page]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(ParsedGallery.self, from: data)
    }

    private static let script = #"""
        import html.parser, json, sys
        VOID = {"img", "meta", "link", "br", "hr", "input"}
        class Page(html.parser.HTMLParser):
            def __init__(self):
                super().__init__(convert_charrefs=True)
                self.out = {"tiles": [], "failures": {}, "classOrder": [], "summary": None,
                            "scripts": 0, "handlers": [], "links": []}
                self.depth = 0
                self.field = None  # (target dict, key, depth)
                self.tile = None
                self.kind = None
                self.item = None
            def handle_starttag(self, tag, attrs):
                a = dict(attrs)
                cls = (a.get("class") or "").split()
                for key, value in attrs:
                    if key.startswith("on"): self.out["handlers"].append(key)
                    if key in ("href", "src"): self.out["links"].append(value)
                if tag == "script": self.out["scripts"] += 1
                if tag not in VOID: self.depth += 1
                if tag == "figure" and "tile" in cls:
                    self.tile = {"status": a.get("data-status"), "title": a.get("title"), "href": None, "img": None,
                                 "placeholder": None, "name": "", "shown": "", "meta": ""}
                elif self.tile is not None and tag == "a" and "frame" in cls:
                    self.tile["href"] = a.get("href")
                    if "ph" in cls: self.tile["placeholder"] = a.get("title")
                elif self.tile is not None and tag == "img":
                    self.tile["img"] = {"src": a["src"], "width": int(a["width"]), "height": int(a["height"]),
                                        "loading": a.get("loading")}
                elif self.tile is not None and tag == "a" and "name" in cls:
                    self.tile["name"] = a.get("title") or ""
                    self.field = (self.tile, "shown", self.depth)
                elif self.tile is not None and tag == "span" and "meta" in cls:
                    self.field = (self.tile, "meta", self.depth)
                elif tag == "details":
                    self.kind = a.get("data-class")
                    self.out["failures"][self.kind] = []
                    self.out["classOrder"].append(self.kind)
                elif self.kind and tag == "li":
                    self.item = {"reason": "", "url": "", "where": ""}
                elif self.item is not None and tag == "span" and cls and cls[0] in ("reason", "url", "where"):
                    self.field = (self.item, cls[0], self.depth)
                elif tag == "p" and "summary" in cls:
                    self.out["summary"] = ""
                    self.field = (self.out, "summary", self.depth)
            def handle_endtag(self, tag):
                if tag in VOID: return
                self.depth -= 1
                if self.field and self.depth < self.field[2]: self.field = None
                if tag == "figure" and self.tile is not None:
                    self.out["tiles"].append(self.tile)
                    self.tile = None
                elif tag == "li" and self.item is not None:
                    self.out["failures"][self.kind].append(self.item)
                    self.item = None
                elif tag == "details":
                    self.kind = None
            def handle_data(self, data):
                if self.field: self.field[0][self.field[1]] += data
        page = Page()
        with open(sys.argv[1], encoding="utf-8") as f: page.feed(f.read())
        page.close()
        print(json.dumps(page.out))
        """#
}
