@testable import ImgFetchCore
import XCTest

/// `CachePlanner`: the policy, the index entry and the files on disk decide what an output needs.
final class CachePlannerTests: XCTestCase {
    private let now = 1_800_000_000.0
    private var disk: [String: Int64] = [:]

    private func planner(_ policy: CachePolicy = .protocol, existing: ExistingFilePolicy = .skip,
                         kind: String = "original", verifies: Bool = true) -> CachePlanner {
        let disk = disk
        return CachePlanner(policy: policy, kind: kind, verifies: verifies, existingFiles: existing,
                            fileStamp: { name in disk[name].map { FileStamp(size: $0, inode: 7, modified: 1000) } })
    }

    private func entry(fresh: Bool, etag: String? = "\"e\"", files: [String: Int64] = ["a.jpg": 10],
                       verified: Bool = true, kind: String = "original", format: ImageFormat = .jpeg) -> CacheEntry {
        CacheEntry(url: "http://h/a.jpg", kind: kind, format: format,
                   image: ImageInfo(width: 1, height: 1, channels: 3, bitDepth: 8, verified: verified),
                   headers: ResponseCacheHeaders(etag: etag),
                   freshness: CacheFreshness(lifetime: fresh ? 600 : 0, initialAge: 0, responseTime: now - 1),
                   bodySize: 10, contentHash: "h",
                   files: files.map { CacheEntry.File(name: $0.key, size: $0.value) }.sorted { $0.name < $1.name })
    }

    private func plan(_ planner: CachePlanner, _ entry: CacheEntry?, possible: [String] = ["a.jpg", "a.png"]) -> CachePlan {
        planner.plan(entry: entry, wantedName: { $0 == .jpeg ? "a.jpg" : "a.png" }, possibleNames: possible, now: now)
    }

    func testWithoutAnEntryAnExistingFileIsKeptOrReplaced() {
        XCTAssertEqual(plan(planner(), nil), .download(owner: nil))
        disk["a.png"] = 3
        XCTAssertEqual(plan(planner(), nil), .keepExisting(name: "a.png"))
        XCTAssertEqual(plan(planner(existing: .overwrite), nil), .download(owner: nil))
        XCTAssertEqual(plan(planner(.onlyIfCached), nil), .keepExisting(name: "a.png"))
        XCTAssertEqual(plan(planner(.onlyIfCached, existing: .overwrite), nil), .missing)
    }

    func testFreshIsServedStaleIsRevalidated() {
        disk["a.jpg"] = 10
        let fresh = entry(fresh: true)
        XCTAssertEqual(plan(planner(), fresh), .serve(fresh, source: "a.jpg", outcome: .fresh))
        let stale = entry(fresh: false)
        XCTAssertEqual(plan(planner(), stale), .revalidate(stale, source: "a.jpg"))
        let noValidators = entry(fresh: false, etag: nil)
        XCTAssertEqual(plan(planner(), noValidators), .download(owner: noValidators))
    }

    func testReloadAndOnlyIfCached() {
        disk["a.jpg"] = 10
        let stale = entry(fresh: false)
        XCTAssertEqual(plan(planner(.reload), stale), .download(owner: stale))
        XCTAssertEqual(plan(planner(.onlyIfCached), stale), .serve(stale, source: "a.jpg", outcome: .stale))
        XCTAssertEqual(plan(planner(.onlyIfCached), entry(fresh: true)), .serve(entry(fresh: true), source: "a.jpg", outcome: .fresh))
    }

    func testAFileThatWasDeletedOrChangedIsNotASource() {
        let fresh = entry(fresh: true)
        XCTAssertEqual(plan(planner(), fresh), .download(owner: fresh), "deleted")
        XCTAssertEqual(plan(planner(.onlyIfCached), fresh), .missing)
        disk["a.jpg"] = 11
        XCTAssertEqual(plan(planner(), fresh), .download(owner: fresh), "another size: not the indexed body")
    }

    func testAFileReplacedOrEditedToTheSameSizeIsNotASource() {
        disk["a.jpg"] = 10
        var entry = entry(fresh: true)
        entry.files = [CacheEntry.File(name: "a.jpg", size: 10, inode: 7, modified: 1000)]
        XCTAssertEqual(plan(planner(), entry), .serve(entry, source: "a.jpg", outcome: .fresh))
        entry.files = [CacheEntry.File(name: "a.jpg", size: 10, inode: 8, modified: 1000)]
        XCTAssertEqual(plan(planner(), entry), .download(owner: entry), "another inode: the file was replaced")
        entry.files = [CacheEntry.File(name: "a.jpg", size: 10, inode: 7, modified: 999)]
        XCTAssertEqual(plan(planner(), entry), .download(owner: entry), "another modification time: the file was edited")
    }

    func testAnotherIndexedCopyServesAMissingName() {
        disk["copy.jpg"] = 10
        let fresh = entry(fresh: true, files: ["a.jpg": 10, "copy.jpg": 10])
        XCTAssertEqual(plan(planner(), fresh), .serve(fresh, source: "copy.jpg", outcome: .fresh))
    }

    /// Another file holds the wanted name: skip-existing keeps it, and the item's result is its own
    /// indexed file (an earlier run's side name), not the other file.
    func testAnUnindexedFileAtTheWantedNameFollowsSkipExisting() {
        disk["a.jpg"] = 99
        disk["copy.jpg"] = 10
        let fresh = entry(fresh: true, files: ["copy.jpg": 10])
        XCTAssertEqual(plan(planner(), fresh), .keepExisting(name: "copy.jpg"))
        let gone = entry(fresh: true, files: ["gone.jpg": 10])
        XCTAssertEqual(plan(planner(), gone), .keepExisting(name: "a.jpg"), "no own file left: the name's file is kept")
        XCTAssertEqual(plan(planner(existing: .overwrite), fresh), .serve(fresh, source: "copy.jpg", outcome: .fresh))
    }

    func testEntriesOfAnotherKindOrUnverifiedAreNotReused() {
        disk["a.jpg"] = 10
        let other = entry(fresh: true, kind: "ppm")
        XCTAssertEqual(plan(planner(), other), .download(owner: other))
        let unverified = entry(fresh: true, verified: false)
        XCTAssertEqual(plan(planner(), unverified), .download(owner: unverified), "saved with --no-decode, now verifying")
        XCTAssertEqual(plan(planner(verifies: false), unverified), .serve(unverified, source: "a.jpg", outcome: .fresh))
        XCTAssertEqual(plan(planner(), other, possible: ["a.jpg"]), .download(owner: other), "its own files are not 'existing'")
        // Every decodable format, not only JPEG and PNG: a GIF saved with --no-decode is verified next time.
        for format in [ImageFormat.gif, .webp, .avif, .tiff, .bmp] {
            let unverifiedOther = entry(fresh: true, verified: false, format: format)
            XCTAssertEqual(plan(planner(), unverifiedOther), .download(owner: unverifiedOther), "\(format)")
        }
        // A format imgfetch cannot decode is never verified, so never waits for it.
        let svg = entry(fresh: true, verified: false, format: .svg)
        XCTAssertEqual(plan(planner(), svg, possible: ["a.jpg"]), .serve(svg, source: "a.jpg", outcome: .fresh))
    }

    func testNoCacheIsNeverFresh() {
        disk["a.jpg"] = 10
        var noCache = entry(fresh: true)
        noCache.headers.cacheControl = "max-age=600, no-cache"
        XCTAssertEqual(plan(planner(), noCache), .revalidate(noCache, source: "a.jpg"))
    }
}
