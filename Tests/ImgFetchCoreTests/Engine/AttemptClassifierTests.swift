import XCTest
@testable import ImgFetchCore

/// How libcurl's timeout texts become error classes: a resolver that never answers is `dns`.
final class AttemptClassifierTests: XCTestCase {
    private func transfer(_ url: String) throws -> Transfer {
        Transfer(id: 1, url: try ParsedURL(url), directory: TempFileDirectory(path: "/nonexistent"), maxSize: 1 << 20, onFinish: { _ in })
    }

    func testResolverTimeoutIsADNSFailure() throws {
        let configuration = DownloaderConfiguration(outputDirectory: ".")
        let error = AttemptClassifier.timeoutError("Resolving timed out after 10003 milliseconds",
                                                   try transfer("https://cdn.example/a.jpg"), configuration: configuration)
        XCTAssertEqual(error, DownloadError(.dns, "could not resolve host cdn.example: Resolving timed out after 10003 milliseconds"))
        let other = AttemptClassifier.timeoutError("Could not resolve host: cdn.example",
                                                   try transfer("https://cdn.example/a.jpg"), configuration: configuration)
        XCTAssertEqual(other.kind, .dns)
    }

    func testOtherTimeoutsStayTimeouts() throws {
        let configuration = DownloaderConfiguration(outputDirectory: ".")
        let connect = AttemptClassifier.timeoutError("Connection timed out after 10001 milliseconds",
                                                     try transfer("https://cdn.example/a.jpg"), configuration: configuration)
        XCTAssertEqual(connect.kind, .timeout)
        XCTAssertTrue(connect.message.hasPrefix("connect timed out (--connect-timeout)"))
    }
}
