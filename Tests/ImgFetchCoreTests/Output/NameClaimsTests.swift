import XCTest
@testable import ImgFetchCore

final class NameClaimsTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        scratch.remove()
    }

    /// The table against a dictionary, through many doublings (from 16 home slots), with keys
    /// that repeat, owners that change, and the key 0 that cannot be stored in a slot.
    func testClaimsMatchADictionaryThroughManyDoublings() throws {
        let claims = try NameClaims(directory: scratch.path, initialBits: 4)
        var model: [UInt64: Int64] = [:]
        var generator = SplitMix64(seed: 7)
        for step in 0..<200_000 {
            // A key space of 60,000 keys: about a third of the claims hit a taken key.
            let key = step % 9973 == 0 ? 0 : generator.next() % 60_000 &* 0x9E37_79B9_7F4A_7C15
            let owner = Int64(bitPattern: generator.next() % 4)
            if step % 7 == 0 {
                try claims.assign(key, to: owner)
                model[key] = owner
            } else {
                let expected: NameClaims.Claim = model[key].map { $0 == owner ? .claimed : .heldBy($0) } ?? .claimed
                XCTAssertEqual(try claims.claim(key, for: owner), expected, "step \(step)")
                if model[key] == nil { model[key] = owner }
            }
            if step % 50_000 == 0 { XCTAssertEqual(claims.claimedCount, model.count) }
        }
        XCTAssertEqual(claims.claimedCount, model.count)
        for (key, owner) in model { XCTAssertEqual(try claims.owner(of: key), owner) }
        XCTAssertNil(try claims.owner(of: 0xDEAD_BEEF_0000_0001))
    }

    /// Keys whose homes fall together (a hash that puts every key in the table's last sixteenth):
    /// clusters hundreds of slots long run past the last home slot into the file's tail, cross
    /// the 8-slot copy chunks, and stay whole through every doubling.
    func testCrowdedClustersSurviveDoubling() throws {
        let claims = try NameClaims(directory: scratch.path, initialBits: 4, copyChunk: 8) { key, _ in
            UInt64.max - (key % 64) << 54
        }
        let keys = (1...3000).map { UInt64($0) }
        for key in keys { XCTAssertEqual(try claims.claim(key, for: Int64(key)), .claimed) }
        for key in keys { XCTAssertEqual(try claims.owner(of: key), Int64(key)) }
        for key in keys { XCTAssertEqual(try claims.claim(key, for: -1), .heldBy(Int64(key))) }
        XCTAssertNil(try claims.owner(of: 3001))
        XCTAssertEqual(claims.claimedCount, 3000)
    }

    func testTheFileHasNoName() throws {
        let claims = try NameClaims(directory: scratch.path)
        for key in 1...100_000 as ClosedRange<UInt64> { _ = try claims.claim(key &* 0x2545_F491_4F6C_DD1D, for: 1) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path), [], "the claims file has no name")
    }

    func testAnUnwritableDirectoryIsAFilesystemError() {
        XCTAssertThrowsError(try NameClaims(directory: scratch.path + "/missing")) { error in
            XCTAssertEqual((error as? DownloadError)?.kind, .filesystem)
            XCTAssertTrue("\(error)".contains("name claims"), "\(error)")
        }
    }
}
