import Synchronization
import XCTest
@testable import ImgFetchCore

final class DiskSpaceGuardTests: XCTestCase {
    func testAFullDiskTripsOnceWithTheOSMessage() {
        let guardian = DiskSpaceGuard(path: "/tmp", minimumFree: 0)
        let calls = Mutex<[DownloadError]>([])
        guardian.onFull { error in calls.withLock { $0.append(error) } }
        guardian.note(DownloadError(.filesystem, "cannot write a.jpg: Permission denied"))
        XCTAssertFalse(guardian.isFull, "only a full disk trips it")
        guardian.note(DownloadError.writing("a.jpg", ENOSPC))
        guardian.note(DownloadError.writing("b.jpg", EDQUOT))
        XCTAssertTrue(guardian.isFull)
        XCTAssertFalse(guardian.check())
        let errors = calls.withLock { $0 }
        XCTAssertEqual(errors.count, 1)
        XCTAssertEqual(errors.first?.kind, .diskFull)
        XCTAssertEqual(errors.first?.message, "not downloaded: the output's disk is full (cannot write a.jpg: No space left on device)")
        XCTAssertEqual(guardian.failure, errors.first)
    }

    func testQuotaAndFullDiskAreDiskFullOtherErrorsAreFilesystem() {
        XCTAssertEqual(DownloadError.writing("x", ENOSPC).kind, .diskFull)
        XCTAssertEqual(DownloadError.writing("x", EDQUOT).kind, .diskFull)
        XCTAssertEqual(DownloadError.writing("x", EIO).kind, .filesystem)
        XCTAssertEqual(DownloadError.writing("x", EDQUOT).message, "cannot write x: Disk quota exceeded")
    }

    func testFreeSpaceBelowTheMinimumTrips() throws {
        let available = try XCTUnwrap(DiskSpaceGuard.availableBytes(at: "/tmp"))
        let roomy = DiskSpaceGuard(path: "/tmp", minimumFree: 1)
        XCTAssertTrue(roomy.check())
        XCTAssertFalse(roomy.isFull)
        let cramped = DiskSpaceGuard(path: "/tmp", minimumFree: available + (1 << 40))
        XCTAssertFalse(cramped.check())
        XCTAssertTrue(cramped.isFull)
        let message = try XCTUnwrap(cramped.failure?.message)
        XCTAssertTrue(message.contains("free on the output's file system (/tmp), below --min-free"), message)
    }

    func testZeroNeverLooksAtFreeSpace() {
        let off = DiskSpaceGuard(path: "/nonexistent", minimumFree: 0)
        XCTAssertTrue(off.check())
        XCTAssertFalse(off.isFull)
    }
}
