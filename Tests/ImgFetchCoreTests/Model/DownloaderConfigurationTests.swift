import XCTest
@testable import ImgFetchCore

final class DownloaderConfigurationTests: XCTestCase {
    func testDecodeThreadsDefaultToOnePerCoreWhenImagesAreDecoded() {
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var configuration = DownloaderConfiguration(outputDirectory: "/tmp")
        XCTAssertEqual(configuration.effectiveDecodeThreads, cores, "verification decodes")
        configuration.verifyImages = false
        configuration.saveAs = .pixels(.ppm)
        XCTAssertEqual(configuration.effectiveDecodeThreads, cores, "pixel outputs decode")
    }

    func testOneDecodeThreadWhenNothingIsDecoded() {
        var configuration = DownloaderConfiguration(outputDirectory: "/tmp")
        configuration.verifyImages = false
        XCTAssertEqual(configuration.effectiveDecodeThreads, 1)
    }

    func testAnExplicitCountWins() {
        var configuration = DownloaderConfiguration(outputDirectory: "/tmp")
        configuration.verifyImages = false
        configuration.decodeThreads = 3
        XCTAssertEqual(configuration.effectiveDecodeThreads, 3)
        configuration.decodeThreads = 0
        XCTAssertEqual(configuration.effectiveDecodeThreads, 1)
    }

    func testTheDecodeBacklogGrowsWithConcurrency() {
        var configuration = DownloaderConfiguration(outputDirectory: "/tmp")
        XCTAssertEqual(configuration.effectiveDecodeBacklog, 32)
        configuration.concurrency = 64
        XCTAssertEqual(configuration.effectiveDecodeBacklog, 32)
        configuration.concurrency = 1000
        XCTAssertEqual(configuration.effectiveDecodeBacklog, 500)
        configuration.decodeBacklog = 8
        XCTAssertEqual(configuration.effectiveDecodeBacklog, 8)
        configuration.decodeBacklog = 0
        XCTAssertEqual(configuration.effectiveDecodeBacklog, 1)
    }
}
