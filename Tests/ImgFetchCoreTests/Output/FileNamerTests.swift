import XCTest
@testable import ImgFetchCore

final class FileNamerTests: XCTestCase {
    // Known vectors, computed independently with `echo -n URL | sha256sum`.
    private let catA = "http://example.com/a/cat.jpg"
    private let catB = "http://example.com/b/cat.jpg"
    private let catBHash = "37e472854df7b4410c36a9c9aacad007e6e24ac45857339445df4268a2fad11a"
    private let upperA = "http://example.com/x/A.jpg"
    private let lowerA = "http://example.com/y/a.jpg"
    private let lowerAHash = "50a24293e12dfb17d1113b105777e399c7010d81256c7f673510a8985383af04"
    private let hashURL = "https://example.com/photos/cat.jpg"
    private let hashURLHash = "cb48dd7fe657e3c1fb1a5ecdcf14ca32b36cd9a3258ca0abe99f79f9546bc563"

    // MARK: - sanitize

    func testSanitizeRejectsDotDot() {
        XCTAssertEqual(FileNamer.sanitize(".."), "image")
        XCTAssertEqual(FileNamer.sanitize("."), "image")
        XCTAssertEqual(FileNamer.sanitize("..."), "image")
    }

    func testSanitizeReplacesSeparators() {
        XCTAssertEqual(FileNamer.sanitize("a/b"), "a_b")
        XCTAssertEqual(FileNamer.sanitize("a\\b"), "a_b")
        XCTAssertEqual(FileNamer.sanitize("../../etc/passwd"), "_.._etc_passwd")
    }

    func testSanitizeReplacesControlCharacters() {
        XCTAssertEqual(FileNamer.sanitize("a\u{01}b\u{1F}c\u{7F}d"), "a_b_c_d")
        XCTAssertEqual(FileNamer.sanitize("a\nb\rc\td"), "a_b_c_d")
        XCTAssertEqual(FileNamer.sanitize("a\u{0}b"), "a_b")
    }

    func testSanitizeDropsLeadingDots() {
        XCTAssertEqual(FileNamer.sanitize(".hidden.jpg"), "hidden.jpg")
        XCTAssertEqual(FileNamer.sanitize("...x"), "x")
        XCTAssertEqual(FileNamer.sanitize("a..b"), "a..b")
    }

    func testSanitizeTrimsWhitespace() {
        XCTAssertEqual(FileNamer.sanitize("  cat.jpg \u{3000}"), "cat.jpg")
        XCTAssertEqual(FileNamer.sanitize("my cat.jpg"), "my cat.jpg")
    }

    func testSanitizeNeverYieldsADotFile() {
        // Whitespace between dots must not let a leading dot survive.
        for raw in [". .hidden", " . . .x", ".\u{00A0}.x", "..  ..x", ".\t.x"] {
            let name = FileNamer.sanitize(raw)
            XCTAssertFalse(name.hasPrefix("."), "sanitize(\(raw.debugDescription)) = \(name.debugDescription) is a dot-file")
            XCTAssertFalse(name.isEmpty)
        }
    }

    func testSanitizeNeverYieldsEmpty() {
        XCTAssertEqual(FileNamer.sanitize(""), "image")
        XCTAssertEqual(FileNamer.sanitize("   "), "image")
        XCTAssertEqual(FileNamer.sanitize(". . ."), "image")
    }

    func testSanitizeCapsAt200BytesWithoutSplittingACharacter() {
        // "a" + 150 × "é" (2 bytes each) = 301 bytes; 199 bytes is the longest whole-character prefix.
        let name = FileNamer.sanitize("a" + String(repeating: "é", count: 150))
        XCTAssertEqual(name.utf8.count, 199)
        XCTAssertEqual(name, "a" + String(repeating: "é", count: 99))
    }

    func testSanitizeCapsFourByteCharacters() {
        let name = FileNamer.sanitize("ab" + String(repeating: "😀", count: 60))
        XCTAssertEqual(name, "ab" + String(repeating: "😀", count: 49))
        XCTAssertEqual(name.utf8.count, 198)
    }

    func testSanitizeKeeps200ByteNameWhole() {
        let exact = String(repeating: "x", count: 200)
        XCTAssertEqual(FileNamer.sanitize(exact), exact)
        XCTAssertEqual(FileNamer.sanitize(exact + "y"), exact)
    }

    // MARK: - Extensions

    func testCorrectExtensionIsKeptInItsOriginalCase() throws {
        let name = try urlName("http://example.com/p/Cat.JPG")
        XCTAssertEqual(name.fileName(for: .jpeg), "Cat.JPG")
    }

    func testJPEGExtensionIsAcceptedForJPEG() throws {
        XCTAssertEqual(try urlName("http://example.com/photo.jpeg").fileName(for: .jpeg), "photo.jpeg")
        XCTAssertEqual(try urlName("http://example.com/scan.tiff").fileName(for: .tiff), "scan.tiff")
    }

    func testWrongImageExtensionIsReplaced() throws {
        XCTAssertEqual(try urlName("http://example.com/cat.png").fileName(for: .jpeg), "cat.jpg")
        XCTAssertEqual(try urlName("http://example.com/cat.JPG").fileName(for: .png), "cat.png")
        XCTAssertEqual(try urlName("http://example.com/cat.gif").fileName(for: .tiff), "cat.tif")
    }

    func testNonImageExtensionIsKeptAndTheImageExtensionAppended() throws {
        XCTAssertEqual(try urlName("http://example.com/img.php").fileName(for: .jpeg), "img.php.jpg")
        XCTAssertEqual(try urlName("http://example.com/img.php?id=3").fileName(for: .webp), "img.php.webp")
    }

    func testMissingExtensionIsAppended() throws {
        let name = try urlName("http://example.com/avatar")
        XCTAssertEqual(name.fileName(for: .jpeg), "avatar.jpg")
        XCTAssertEqual(name.fileName(for: .png), "avatar.png")
        XCTAssertEqual(name.fileName(for: .heic), "avatar.heic")
    }

    func testTrailingSlashGivesImage() throws {
        XCTAssertEqual(try urlName("http://example.com/photos/").fileName(for: .gif), "image.gif")
    }

    func testDotFileSegmentDoesNotBecomeADotFile() throws {
        XCTAssertEqual(try urlName("http://example.com/.htaccess").fileName(for: .png), "htaccess.png")
        XCTAssertEqual(try urlName("http://example.com/..").fileName(for: .png), "image.png")
    }

    func testPercentEncodedSeparatorsNeverReachTheName() throws {
        for url in ["http://example.com/a%2F..%2F..%2Fevil.jpg", "http://example.com/a%5C..%5Cevil.jpg"] {
            let fileName = try urlName(url).fileName(for: .jpeg)
            XCTAssertFalse(fileName.contains("/"), fileName)
            XCTAssertFalse(fileName.contains("\\"), fileName)
            XCTAssertFalse(fileName.hasPrefix("."), fileName)
        }
    }

    func testLongURLNameFitsUnderNameMax() throws {
        let name = try urlName("http://example.com/" + String(repeating: "%C3%A9", count: 300) + ".jpg")
        XCTAssertLessThanOrEqual(name.stem.utf8.count, 200)
        XCTAssertLessThanOrEqual(name.fileName(for: .jpeg).utf8.count, 255)
    }

    // MARK: - Explicit names

    func testExplicitNameIsUsedAsGiven() throws {
        var namer = FileNamer(scheme: .url)
        let name = try namer.name(for: try ParsedURL(catA), explicitName: "My Photo.png")
        XCTAssertTrue(name.isExplicit)
        XCTAssertEqual(name.fileName(for: .jpeg), "My Photo.png")
        XCTAssertEqual(name.fileName(for: .png), "My Photo.png")
        XCTAssertEqual(name.possibleFileNames, ["My Photo.png"])
    }

    func testExplicitNameWinsOverHashNaming() throws {
        var namer = FileNamer(scheme: .hash)
        XCTAssertEqual(try namer.name(for: ParsedURL(catA), explicitName: "keep.jpg").fileName(for: .png), "keep.jpg")
    }

    func testSameExplicitNameForTwoURLsIsDisambiguatedBeforeTheExtension() throws {
        var namer = FileNamer(scheme: .url)
        let first = try namer.name(for: try ParsedURL(catA), explicitName: "x.jpg")
        let second = try namer.name(for: try ParsedURL(catB), explicitName: "x.jpg")
        XCTAssertEqual(first.fileName(for: .jpeg), "x.jpg")
        XCTAssertEqual(second.fileName(for: .jpeg), "x-\(catBHash.prefix(8)).jpg")
    }

    func testExplicitNameAndURLNameNeverShareAFile() throws {
        // out=cat.jpg for one URL, and another URL whose own name is cat.jpg: both would write cat.jpg.
        var namer = FileNamer(scheme: .url)
        let explicit = try namer.name(for: try ParsedURL("http://example.com/other.png"), explicitName: "cat.jpg")
        let derived = try namer.name(for: try ParsedURL(catA))
        XCTAssertNotEqual(explicit.fileName(for: .jpeg), derived.fileName(for: .jpeg))
    }

    // MARK: - Disambiguation

    func testSecondURLWithTheSameNameGetsHashSuffix() throws {
        var namer = FileNamer(scheme: .url)
        let first = try namer.name(for: try ParsedURL(catA))
        let second = try namer.name(for: try ParsedURL(catB))
        XCTAssertEqual(first.fileName(for: .jpeg), "cat.jpg")
        XCTAssertEqual(second.fileName(for: .jpeg), "cat-37e47285.jpg")
        XCTAssertEqual(second.fileName(for: .jpeg), "cat-\(catBHash.prefix(8)).jpg")
    }

    func testSameURLTwiceGetsTheSameName() throws {
        var namer = FileNamer(scheme: .url)
        let first = try namer.name(for: try ParsedURL(catA))
        let again = try namer.name(for: try ParsedURL(catA))
        XCTAssertEqual(first, again)
        let second = try namer.name(for: try ParsedURL(catB))
        let secondAgain = try namer.name(for: try ParsedURL(catB))
        XCTAssertEqual(second, secondAgain)
        XCTAssertEqual(try namer.name(for: ParsedURL(catA)).fileName(for: .jpeg), "cat.jpg")
    }

    func testEquivalentSpellingsOfOneURLGetTheSameName() throws {
        var namer = FileNamer(scheme: .url)
        let first = try namer.name(for: try ParsedURL(catA))
        let again = try namer.name(for: try ParsedURL("HTTP://EXAMPLE.COM:80/a/cat.jpg#frag"))
        XCTAssertEqual(first, again)
    }

    func testTwoURLsWhoseSuffixesCollideGetALongerOne() throws {
        // Both SHA-256s start with fbddefc9: 8 digits would give the two URLs one file name.
        let first = "http://example.com/d90818/cat.jpg"
        let second = "http://example.com/d100861/cat.jpg"
        var namer = FileNamer(scheme: .url)
        XCTAssertEqual(try namer.name(for: ParsedURL(catA)).fileName(for: .jpeg), "cat.jpg")
        XCTAssertEqual(try namer.name(for: ParsedURL(first)).fileName(for: .jpeg), "cat-fbddefc9.jpg")
        XCTAssertEqual(try namer.name(for: ParsedURL(second)).fileName(for: .jpeg), "cat-fbddefc958a4e8ff.jpg")
        // Each keeps its name when it comes again.
        XCTAssertEqual(try namer.name(for: ParsedURL(first)).fileName(for: .jpeg), "cat-fbddefc9.jpg")
        XCTAssertEqual(try namer.name(for: ParsedURL(second)).fileName(for: .jpeg), "cat-fbddefc958a4e8ff.jpg")
    }

    func testALongerSuffixTakesItsBytesOffALongStem() throws {
        // Both SHA-256s start with 4924b042, and the stem is the longest kept (200 bytes).
        let stem = String(repeating: "x", count: 200)
        var namer = FileNamer(scheme: .url)
        _ = try namer.name(for: ParsedURL("http://example.com/first/\(stem).jpg"))
        let eight = try namer.name(for: ParsedURL("http://example.com/d10838/\(stem).jpg")).fileName(for: .jpeg)
        let sixteen = try namer.name(for: ParsedURL("http://example.com/d61425/\(stem).jpg")).fileName(for: .jpeg)
        XCTAssertEqual(eight, stem + "-4924b042.jpg")
        XCTAssertEqual(sixteen, String(repeating: "x", count: 192) + "-4924b042101adde3.jpg")
        XCTAssertEqual(eight.utf8.count, sixteen.utf8.count, "no longer than an 8-digit name")
    }

    func testNamesAreTheSameOnEveryRun() throws {
        let urls = [catA, catB, "http://example.com/c/cat.jpg", upperA, lowerA, "http://example.com/dir/"]
        func run() throws -> [String] {
            var namer = FileNamer(scheme: .url)
            return try urls.map { try namer.name(for: try ParsedURL($0)).fileName(for: .jpeg) }
        }
        let names = try run()
        XCTAssertEqual(names, try run())
        XCTAssertEqual(Set(names).count, names.count, "names collide: \(names)")
    }

    func testCollisionIsCaseInsensitive() throws {
        var namer = FileNamer(scheme: .url)
        let upper = try namer.name(for: try ParsedURL(upperA))
        let lower = try namer.name(for: try ParsedURL(lowerA))
        XCTAssertEqual(upper.fileName(for: .jpeg), "A.jpg")
        XCTAssertEqual(lower.fileName(for: .jpeg), "a-\(lowerAHash.prefix(8)).jpg")
    }

    func testNamesThatMeetOnlyAfterSniffingAreDisambiguated() throws {
        // cat.png that is really a JPEG, and an extension-less cat, both end up as cat.jpg.
        var namer = FileNamer(scheme: .url)
        let jpg = try namer.name(for: try ParsedURL(catA))
        let png = try namer.name(for: try ParsedURL("http://example.com/c/cat.png"))
        let bare = try namer.name(for: try ParsedURL("http://example.com/d/cat"))
        let names = [jpg, png, bare].map { $0.fileName(for: .jpeg) }
        XCTAssertEqual(Set(names).count, 3, "\(names)")
        XCTAssertEqual(names[0], "cat.jpg")
    }

    // MARK: - Hash naming

    func testHashNameIsTheFullSHA256OfTheNormalizedURL() throws {
        var namer = FileNamer(scheme: .hash)
        let name = try namer.name(for: try ParsedURL(hashURL))
        XCTAssertEqual(name.stem, hashURLHash)
        XCTAssertEqual(name.fileName(for: .png), hashURLHash + ".png")
        XCTAssertEqual(name.fileName(for: .jpeg), hashURLHash + ".jpg")
    }

    func testHashNameUsesTheNormalizedForm() throws {
        var namer = FileNamer(scheme: .hash)
        let name = try namer.name(for: try ParsedURL("HTTPS://Example.com:443/photos/cat.jpg#x"))
        XCTAssertEqual(name.stem, hashURLHash)
    }

    func testSHA256KnownVector() {
        XCTAssertEqual(SHA256.hexDigest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hexDigest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    // MARK: - possibleFileNames

    func testPossibleFileNamesOfANameWithAnImageExtensionIsThatNameOnly() throws {
        // One access() per item; a body of another format is still caught when it is placed.
        XCTAssertEqual(try urlName("http://example.com/Cat.JPG").possibleFileNames, ["Cat.JPG"])
        XCTAssertEqual(try urlName("http://example.com/scan.TIFF").possibleFileNames, ["scan.TIFF"])
    }

    func testPossibleFileNamesCoverEveryFormatWhenTheNameHasNoImageExtension() throws {
        for url in ["http://example.com/img.php", "http://example.com/bare"] {
            let name = try urlName(url)
            for format in ImageFormat.allCases {
                XCTAssertTrue(name.possibleFileNames.contains(name.fileName(for: format)),
                              "\(url): \(name.fileName(for: format)) missing from \(name.possibleFileNames)")
            }
        }
    }

    func testPossibleFileNamesWithoutExtension() throws {
        let name = try urlName("http://example.com/bare")
        XCTAssertEqual(name.possibleFileNames.first, "bare.jpg")
        XCTAssertEqual(name.possibleFileNames.count, ImageFormat.allCases.count)
    }

    private func urlName(_ url: String) throws -> OutputName {
        var namer = FileNamer(scheme: .url)
        return try namer.name(for: try ParsedURL(url))
    }
}
