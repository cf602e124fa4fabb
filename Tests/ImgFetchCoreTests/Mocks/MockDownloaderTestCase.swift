import XCTest
@testable import ImgFetchCore

/// Base class for tests of `ImageDownloader` through a `MockTransport`: a fresh scratch directory,
/// transport, completion recorder and downloader per test.
class MockDownloaderTestCase: XCTestCase {
    var directory: ScratchDirectory!
    var transport: MockTransport!
    var recorder: CompletionRecorder!
    var downloader: ImageDownloader!

    /// Prefix of the scratch directory's name, so leftovers say which suite made them.
    var scratchPrefix: String { "imgfetch-downloader" }

    override func setUpWithError() throws {
        directory = try ScratchDirectory(prefix: scratchPrefix)
        transport = MockTransport()
        recorder = CompletionRecorder()
        downloader = makeDownloader()
    }

    override func tearDown() {
        downloader.close()
        directory.remove()
    }

    /// A downloader on `transport` writing into `directory`; `adjust` changes its configuration.
    func makeDownloader(_ adjust: (inout DownloaderConfiguration) -> Void = { _ in }) -> ImageDownloader {
        var configuration = DownloaderConfiguration(outputDirectory: directory.path)
        configuration.decodeThreads = 2
        // The mock serves a JPEG signature and filler: these tests are about the registry, not the decoder.
        configuration.verifyImages = false
        adjust(&configuration)
        return ImageDownloader(configuration: configuration, transport: transport)
    }
}
