import Foundation
import XCTest

/// A password or header value given on the command line is masked in the process's own argv at
/// once, as curl does: /proc/PID/cmdline, which `ps` shows every local user, no longer holds it,
/// while the requests still carry it.
final class SecretsInArgvTests: EndToEndTestCase {
    func testPasswordsAndHeaderValuesLeaveTheProcessArguments() throws {
        _ = try addJPEG("a.jpg")
        let url = server.url("/delay/2/files/a.jpg").replacingOccurrences(of: "http://", with: "http://carol:urlpass@")
        let running = try RunningImgFetch([url, "-o", outputDirectory, "-u", "alice:s3cr3t", "-H", "X-Api-Key: k3y-123", "-q"])
        XCTAssertTrue(try eventually(timeout: 10) { try !server.requests().isEmpty })
        let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(running.process.processIdentifier)/cmdline"))
        let shown = String(decoding: cmdline, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
        for secret in ["s3cr3t", "k3y-123", "urlpass"] {
            XCTAssertFalse(shown.contains(secret), "\(secret) in /proc/PID/cmdline: \(shown)")
        }
        XCTAssertTrue(shown.contains("-u alice:****** -H X-Api-Key: ******* "), shown)
        XCTAssertEqual(try running.wait().exitCode, 0)
        // The request still went with them.
        let request = try XCTUnwrap(try server.requests().first)
        XCTAssertEqual(request.header("X-Api-Key"), "k3y-123")
        XCTAssertEqual(request.header("Authorization"), "Basic " + Data("alice:s3cr3t".utf8).base64EncodedString())
    }
}
