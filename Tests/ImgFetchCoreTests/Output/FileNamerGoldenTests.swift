import XCTest
@testable import ImgFetchCore

/// The names of a 100,000-line list full of collisions, held to the digest of the names that the
/// release before issue 20 gave (commit 07800b4, names claimed in memory). Claims now live on
/// disk; the names must not change.
final class FileNamerGoldenTests: XCTestCase {
    /// SHA-256 of `GoldenList.names(...)`'s text as commit 07800b4 produced it.
    static let goldenDigest = "7bdad1f92e8bf69ac2d64940dd33d9127e7769557bbcccd0dc0fabf3d799491b"

    func testNamesMatchTheReleaseBeforeClaimsMovedToDisk() throws {
        var namer = FileNamer(scheme: .url)
        var text = ""
        var generator = GoldenList()
        for index in 0..<100_000 {
            let (url, explicit) = generator.next(index)
            let name = try namer.name(for: try ParsedURL(url), explicitName: explicit)
            text += "\(index)\t\(name.stem)\t\(name.givenExtension ?? "-")\t\(name.isExplicit)\n"
        }
        XCTAssertEqual(SHA256.hexDigest(text), Self.goldenDigest)
    }
}

/// A deterministic list shaped to collide: a small pool of names spread over many directories,
/// case variants, `out=` names, exact repeats, names that look like disambiguated ones, long and
/// non-ASCII names, trailing slashes and queries.
struct GoldenList {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var earlier: [(String, String?)] = []

    private mutating func random(_ bound: Int) -> Int {
        // xorshift64*: the same sequence on every platform and run.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Int((state &* 0x2545_F491_4F6C_DD1D) >> 33) % bound
    }

    static let stems = ["cat", "Cat", "CAT", "image", "photo", "IMG_0001", "0", "index", "thumb", "a%20b",
                        "%C3%BCn%C3%AFcode", "%E6%97%A5%E6%9C%AC", String(repeating: "x", count: 230), ".hidden", "..",
                        "x.tar", "name.jpeg", "logo", "download", "a%2Fb", "semi;colon", "cat-1a2b3c4d"]
    static let extensions = [".jpg", ".JPG", ".jpeg", ".png", ".PNG", ".gif", ".webp", "", ".php", ".avif"]
    static let explicitNames = ["cat.jpg", "keep", "photo.png", "x.JPG", "My Photo.webp", "cat"]

    mutating func next(_ index: Int) -> (String, String?) {
        let roll = random(100)
        let entry: (String, String?)
        if roll < 10, !earlier.isEmpty {
            entry = earlier[random(earlier.count)]
        } else if roll < 50 {
            let stem = Self.stems[random(Self.stems.count)]
            let ext = Self.extensions[random(Self.extensions.count)]
            entry = ("http://names.test/d\(random(2000))/\(stem)\(ext)", nil)
        } else if roll < 55 {
            entry = ("http://names.test/d\(random(2000))/" + (random(2) == 0 ? "" : "?id=\(random(50))"), nil)
        } else if roll < 62 {
            entry = ("http://names.test/e/\(index).jpg", Self.explicitNames[random(Self.explicitNames.count)])
        } else if roll < 67 {
            entry = ("http://names.test/m\(random(100))/cat-\(String(random(1 << 30), radix: 16)).jpg", nil)
        } else if roll < 70 {
            entry = ("HTTP://NAMES.TEST:80/d\(random(2000))/Cat.jpg#f\(random(9))", nil)
        } else {
            entry = ("http://names.test/u/\(index).jpg", nil)
        }
        if earlier.count < 5000 { earlier.append(entry) } else { earlier[random(5000)] = entry }
        return entry
    }
}
