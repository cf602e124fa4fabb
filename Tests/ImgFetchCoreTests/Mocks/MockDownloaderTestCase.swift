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

    /// The kind of temp file forced on the downloader; nil lets the directory decide (unnamed here).
    private(set) var tempFileKind: TempFileDirectory.Kind?

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

    /// Runs `body` with the temp files the output directory decides on (unnamed here), then again
    /// with named ones, as on a file system without O_TMPFILE: with a fresh directory, transport,
    /// recorder and downloader each time. (Linux's XCTest runs no inherited tests, so a subclass
    /// per kind would run nothing.)
    func forEachTempFileKind(_ body: () throws -> Void) throws {
        try body()
        tearDown()
        tempFileKind = .named
        defer { tempFileKind = nil }
        try setUpWithError()
        try body()
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
                                expected: Bool) {
        super.recordFailure(withDescription: tempFileKind.map { "[\($0) temp files] \(description)" } ?? description,
                            inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// A downloader on `transport` writing into `directory`; `adjust` changes its configuration.
    func makeDownloader(_ adjust: (inout DownloaderConfiguration) -> Void = { _ in }) -> ImageDownloader {
        var configuration = DownloaderConfiguration(outputDirectory: directory.path)
        configuration.decodeThreads = 2
        // The mock serves a JPEG signature and filler: these tests are about the registry, not the decoder.
        configuration.verifyImages = false
        adjust(&configuration)
        return try! ImageDownloader(configuration: configuration, transport: transport, tempFileKind: tempFileKind)
    }
}
