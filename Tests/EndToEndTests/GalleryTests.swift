import Foundation
import XCTest

/// `--gallery FILE`: the page a real run writes, read back with an independent HTML parser, and
/// the thumbnails it links to, decoded with netpbm.
final class GalleryTests: EndToEndTestCase {
    private var hostileName: String { GalleryFixtures.hostileName }

    /// The file a relative link of the page leads to.
    private func target(of link: String) throws -> URL {
        let path = try XCTUnwrap(link.removingPercentEncoding)
        return URL(fileURLWithPath: path, relativeTo: scratch.file("pages/")).standardizedFileURL
    }

    private func stamp(_ path: String) throws -> [String] {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return ["\(attributes[.systemFileNumber] ?? "")", "\((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"]
    }

    func testThePageShowsEveryImageAndEveryFailure() throws {
        let result = try runWithGallery(try galleryList(), ["--report", "run.jsonl"])
        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let html = try String(contentsOfFile: pagePath, encoding: .utf8)
        let page = try ParsedGallery.parse(pagePath)

        // Nothing from the input became markup, and every link is a relative path into the output directory.
        XCTAssertEqual(page.scripts, 0)
        XCTAssertEqual(page.handlers, [])
        XCTAssertFalse(html.lowercased().contains("<script"))
        XCTAssertFalse(html.contains("<!--"))
        XCTAssertFalse(html.contains("<b>x</b>"))
        let output = scratch.file("out").standardizedFileURL.path
        // One link within the page: the header's failure count to the failures, below the images.
        XCTAssertEqual(page.links.filter { $0.hasPrefix("#") }, ["#failures"])
        for link in page.links where !link.hasPrefix("#") {
            XCTAssertFalse(link.contains(":") || link.hasPrefix("/") || link.contains("#") || link.contains("?"), link)
            XCTAssertTrue(try target(of: link).path.hasPrefix(output + "/"), link)
        }

        // Every saved image has a tile whose thumbnail exists, decodes (a JPEG, or a PNG for an
        // image with alpha) within 256 px, and has the size the tag says.
        let saved = result.results.filter { $0[0] == "saved" }
        XCTAssertEqual(saved.count, 9, result.stdout)
        XCTAssertEqual(page.tiles.count, saved.count)
        for line in saved {
            let name = URL(fileURLWithPath: line[2]).lastPathComponent
            let tile = try XCTUnwrap(page.tiles.first { $0.name == name }, name)
            XCTAssertEqual(tile.status, "saved")
            XCTAssertEqual(tile.title, line[1])
            XCTAssertEqual(try target(of: XCTUnwrap(tile.href)).path, scratch.file(line[2]).standardizedFileURL.path)
            guard name != "badge.svg" else {
                XCTAssertNil(tile.img)
                XCTAssertEqual(tile.placeholder, "no preview: imgfetch cannot decode SVG")
                XCTAssertTrue(tile.meta.contains("unverified"), tile.meta)
                continue
            }
            let img = try XCTUnwrap(tile.img, name)
            XCTAssertEqual(img.loading, "lazy")
            let thumbnail = try target(of: img.src)
            XCTAssertEqual(thumbnail.deletingLastPathComponent().path, output + "/.imgfetch/thumbs")
            let isPNG = thumbnail.pathExtension == "png"
            XCTAssertEqual(isPNG, name == "rings.png", "\(name): \(thumbnail.lastPathComponent)")
            let decoded = try XCTUnwrap(NetpbmImage.reference(isPNG ? "pngtopam" : "djpeg", [], file: thumbnail),
                                        "\(name): \(thumbnail.lastPathComponent) does not decode")
            XCTAssertEqual(decoded.maxval, 255, "\(name): 8-bit")
            XCTAssertEqual([decoded.width, decoded.height], [img.width, img.height], name)
            XCTAssertLessThanOrEqual(max(img.width, img.height), 256, name)
        }
        func size(_ name: String) -> [Int]? { page.tiles.first { $0.name == name }?.img.map { [$0.width, $0.height] } }
        XCTAssertEqual(size("sunset.jpg"), [256, 160])
        XCTAssertEqual(size("portrait.jpg"), [171, 256], "EXIF orientation 6 is applied")
        XCTAssertEqual(size("tall.png"), [55, 256])
        XCTAssertEqual(size("tiles.gif"), [256, 171])
        XCTAssertEqual(size(hostileName), size("sunset.jpg"))
        // A long name is cut in the middle, so names that share a start still differ; the title has it whole.
        let shown = try XCTUnwrap(page.tiles.first { $0.name == hostileName }?.shown)
        XCTAssertEqual(shown.count, 26, shown)
        XCTAssertTrue(shown.hasPrefix("<script>") && shown.hasSuffix("&amp;.jpg") && shown.contains("…"), shown)
        // The run says where the page is, as a link a terminal opens.
        XCTAssertTrue(result.stderr.contains("imgfetch: gallery: file://" + URL(fileURLWithPath: pagePath).standardizedFileURL.path + "\n"),
                      result.stderr)
        XCTAssertEqual(page.tiles.first { $0.name == hostileName }?.img?.src, page.tiles.first { $0.name == "sunset.jpg" }?.img?.src,
                       "one thumbnail for one content")
        XCTAssertEqual(page.tiles.first { $0.name == "portrait.jpg" }?.meta.hasPrefix("256 × 384 · "), true)

        // Every failure is listed under its class, with its URL and list line.
        let report = try String(contentsOf: scratch.file("run.jsonl"), encoding: .utf8)
        let failures = try report.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            .filter { $0["status"] as? String == "failed" }
        XCTAssertEqual(failures.count, 4)
        XCTAssertEqual(Set(page.classOrder), ["http", "truncated", "invalid-input"])
        XCTAssertEqual(page.classOrder.first, "http", "the most frequent class first")
        for failure in failures {
            let error = try XCTUnwrap(failure["error"] as? [String: Any])
            let line = try XCTUnwrap(failure["line"] as? [String: Any])
            let entries = try XCTUnwrap(page.failures[try XCTUnwrap(error["class"] as? String)])
            let listed = entries.first { $0.url == failure["url"] as? String }
            XCTAssertNotNil(listed, "\(failure)")
            XCTAssertEqual(listed?.where, "\(line["file"] ?? ""):\(line["line"] ?? "")")
            XCTAssertTrue(listed?.reason.hasPrefix(try XCTUnwrap(error["message"] as? String)) == true, "\(listed?.reason ?? "")")
        }
        XCTAssertTrue(page.failures["http"]?.contains { $0.url.hasSuffix("?q=<script>alert(1)</script>") } == true)

        // The summary line, as on stderr.
        let summary = try XCTUnwrap(result.stderr.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(summary.hasPrefix("imgfetch: 13 items: 9 saved (1 unverified), 0 skipped, 4 failed"), summary)
        XCTAssertEqual(page.summary, summary)

        // Written atomically, and nothing of the run's bookkeeping is left behind.
        XCTAssertEqual(try scratch.contents().filter { $0.hasSuffix(".part") }, [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.file("pages").path), ["gallery.html"])
        let bookkeeping = try FileManager.default.contentsOfDirectory(atPath: output + "/.imgfetch")
        XCTAssertEqual(bookkeeping.filter { !$0.hasPrefix("index.sqlite") }.sorted(), ["run.lock", "thumbs"])
        let thumbnails = try FileManager.default.contentsOfDirectory(atPath: output + "/.imgfetch/thumbs")
        XCTAssertEqual(thumbnails.filter { !$0.hasSuffix(".jpg") && !$0.hasSuffix(".png") }, [])
    }

    func testASecondRunReusesTheThumbnails() throws {
        let list = try galleryList()
        XCTAssertEqual(try runWithGallery(list).exitCode, 1)
        let thumbs = scratch.file("out/.imgfetch/thumbs").path
        let names = try FileManager.default.contentsOfDirectory(atPath: thumbs).sorted()
        XCTAssertEqual(names.count, 7, "one per decodable image: the hostile copy shares the sunset's")
        let before = try names.map { try stamp(thumbs + "/" + $0) }
        let first = try ParsedGallery.parse(pagePath)

        let again = try runWithGallery(list)
        XCTAssertEqual(again.exitCode, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: thumbs).sorted(), names)
        XCTAssertEqual(try names.map { try stamp(thumbs + "/" + $0) }, before, "no thumbnail was written again")
        let second = try ParsedGallery.parse(pagePath)
        XCTAssertEqual(second.tiles.map(\.name).sorted(), first.tiles.map(\.name).sorted())
        XCTAssertEqual(second.tiles.compactMap(\.img?.src).sorted(), first.tiles.compactMap(\.img?.src).sorted())
        XCTAssertTrue(second.tiles.allSatisfy { $0.status == "skipped" }, "the images came from the cache this time")
        XCTAssertTrue(second.summary?.contains(" 9 skipped, 4 failed") == true, second.summary ?? "")
    }

    func testAnUnwritablePageStopsTheRunBeforeItStarts() throws {
        _ = try addJPEG("a.jpg")
        for (path, reason) in [(scratch.file("missing/g.html").path, "No such file or directory"),
                               (scratch.path, "Is a directory")] {
            let result = try fetch([server.url("/files/a.jpg")], ["--gallery", path])
            XCTAssertEqual(result.exitCode, 2)
            XCTAssertEqual(result.stderr, "imgfetch: cannot write gallery '\(path)': \(reason)\n")
            XCTAssertEqual(result.stdout, "")
        }
        XCTAssertEqual(try server.requests(to: "/files/").count, 0)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testThumbnailsThatCannotBeMadeOnlyCostTheirTiles() throws {
        try GalleryFixtures.copy(into: server.root)
        // A file where the thumbnails' directory should be: no thumbnail can be written.
        try FileManager.default.createDirectory(at: scratch.file("out/.imgfetch"), withIntermediateDirectories: true)
        try Data("not a directory".utf8).write(to: scratch.file("out/.imgfetch/thumbs"))
        let result = try runWithGallery(["sunset.jpg", "rings.png"].map { server.url("/files/" + $0) })
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.results.map { $0[0] }, ["saved", "saved"])
        let page = try ParsedGallery.parse(pagePath)
        XCTAssertEqual(page.tiles.count, 2)
        for tile in page.tiles {
            XCTAssertNil(tile.img)
            XCTAssertTrue(tile.placeholder?.contains("thumbs") == true, tile.placeholder ?? "")
        }
    }
}
