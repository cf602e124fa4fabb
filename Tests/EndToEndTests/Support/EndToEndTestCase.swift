import Foundation
import XCTest

/// Base class for end-to-end tests: a fresh test server and output directory per test.
class EndToEndTestCase: XCTestCase {
    var server: TestServer!
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        server = try TestServer()
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        server?.stop()
        scratch?.remove()
    }

    var outputDirectory: String { scratch.file("out").path }

    /// Writes `lines` as a list file and runs `imgfetch LIST -o OUT ARGS`.
    func fetch(_ lines: [String], _ arguments: [String] = []) throws -> Execution {
        let list = try scratch.write("urls.txt", lines.joined(separator: "\n") + "\n")
        return try ImgFetchRunner.run([list, "-o", outputDirectory] + arguments)
    }

    /// Names in the output directory (hidden files included, so a leftover temp file shows up),
    /// except the cache index's folder `.imgfetch`.
    func outputFiles() throws -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: outputDirectory)) ?? []).filter { $0 != ".imgfetch" }.sorted()
    }

    func outputData(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: outputDirectory).appendingPathComponent(name))
    }

    /// A small valid JPEG (a real sample image) served at `/files/NAME`.
    func addJPEG(_ name: String) throws -> Data {
        let samples = try server.addSamples(count: 1, seed: 7)
        let data = try server.fileData(samples.first { $0.hasSuffix(".jpg") }!)
        return try server.addFile(name, data)
    }
}
