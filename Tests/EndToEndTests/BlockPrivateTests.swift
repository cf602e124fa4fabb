import Foundation
import XCTest

/// `--block-private` against the test server: loopback is not public, so every request the
/// server would log is one that should not have been made. An address is refused as connected:
/// given as a literal, in an IPv4-mapped IPv6 form, by a `--resolve` entry (a name that points at
/// a private address, as a rebinding DNS answer would), or at a redirect's hop.
final class BlockPrivateTests: EndToEndTestCase {
    private func results(_ run: Execution) throws -> [[String: Any]] {
        try run.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    private func errorClass(_ result: [String: Any]) -> String? { (result["error"] as? [String: Any])?["class"] as? String }
    private func errorMessage(_ result: [String: Any]) -> String { (result["error"] as? [String: Any])?["message"] as? String ?? "" }

    func testPrivateAddressesAreRefusedInEveryFormAndNoRequestArrives() throws {
        _ = try addJPEG("a.jpg")
        let urls = [server.url("/files/a.jpg"), "http://[::ffff:127.0.0.1]:\(server.port)/files/a.jpg",
                    "http://rebind.test:\(server.port)/files/a.jpg", "http://localhost:\(server.port)/files/a.jpg"]
        let run = try fetch(urls, ["--block-private", "--jsonl", "--resolve", "rebind.test:\(server.port):127.0.0.1"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let lines = try results(run)
        XCTAssertEqual(lines.count, 4)
        for line in lines {
            XCTAssertEqual(errorClass(line), "blocked", "\(line)")
            XCTAssertEqual(line["attempts"] as? Int, 1, "a refusal is not retried: \(line)")
        }
        XCTAssertTrue(errorMessage(lines[2]).contains("rebind.test resolves to 127.0.0.1, a loopback address"), errorMessage(lines[2]))
        XCTAssertEqual(try server.requests().count, 0, "no request may reach a refused address")
        XCTAssertTrue(run.stderr.contains("4 failed (4 blocked)"), run.stderr)
        XCTAssertEqual(try outputFiles(), [])
    }

    func testARedirectToAPrivateAddressIsRefusedAtItsHopAndAnAllowedNetworkPasses() throws {
        let other = try TestServer(bind: "127.0.0.2")
        defer { other.stop() }
        let data = try other.addFile("b.jpg", try server.fileData(try server.addSamples(count: 1, seed: 3).first { $0.hasSuffix(".jpg") }!))
        let target = "http://127.0.0.2:\(other.port)/files/b.jpg"
        let hop = server.url("/redirect-to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        // The first server's own address is let through by name; the redirect's is not.
        let refused = try fetch([hop], ["--block-private", "--allow-host", "127.0.0.1", "--jsonl"])
        XCTAssertEqual(refused.exitCode, 1, refused.stderr)
        let line = try XCTUnwrap(try results(refused).first)
        XCTAssertEqual(errorClass(line), "blocked")
        XCTAssertTrue(errorMessage(line).contains("127.0.0.2 is a loopback address"), errorMessage(line))
        XCTAssertEqual(try server.requests().count, 1, "the allowed first hop is requested")
        XCTAssertEqual(try other.requests().count, 0, "the redirect's private address gets no request")

        let allowed = try fetch([hop], ["--block-private", "--allow-host", "127.0.0.0/8", "--jsonl"])
        XCTAssertEqual(allowed.exitCode, 0, allowed.stderr)
        XCTAssertEqual(try results(allowed).first?["status"] as? String, "saved")
        let files = try outputFiles()
        XCTAssertEqual(files.count, 1, "\(files)")
        XCTAssertEqual(try outputData(try XCTUnwrap(files.first)), data)
    }

    func testAHostAllowedByNameIsFetchedWhateverItResolvesTo() throws {
        let data = try addJPEG("c.jpg")
        let run = try fetch(["http://pics.mirror.test:\(server.port)/files/c.jpg"],
                            ["--block-private", "--allow-host", ".mirror.test", "--resolve", "pics.mirror.test:\(server.port):127.0.0.1"])
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try outputData("c.jpg"), data)
    }

    func testTheMetadataAddressIsRefusedEvenWithoutTheOption() throws {
        // Nothing listens there on a test machine: a connection would fail as network or timeout, not blocked.
        let run = try fetch(["http://meta.test/latest/meta-data/iam/security-credentials/"],
                            ["--jsonl", "--resolve", "meta.test:80:169.254.169.254"])
        XCTAssertEqual(run.exitCode, 1, run.stderr)
        let line = try XCTUnwrap(try results(run).first)
        XCTAssertEqual(errorClass(line), "blocked")
        XCTAssertTrue(errorMessage(line).contains("the cloud instance-metadata address"), errorMessage(line))
    }

    func testTheObjectStoreIsNotAnImageRequestAndIsReachedOnItsPrivateAddress() throws {
        let store = try S3TestStore()
        defer { store.stop() }
        let data = try addJPEG("d.jpg")
        let list = try scratch.write("urls.txt", "http://pics.test:\(server.port)/files/d.jpg\n")
        let run = try ImgFetchRunner.run([list, "-o", "s3://pics/x", "--work-dir", scratch.file("work").path, "--block-private",
                                          "--allow-host", "pics.test", "--resolve", "pics.test:\(server.port):127.0.0.1"],
                                         environment: store.environment)
        XCTAssertEqual(run.exitCode, 0, run.stderr)
        XCTAssertEqual(try store.objects(prefix: "x/")["x/d.jpg"]?.sha256, sha256Hex(data))
    }

    func testAProxyInTheEnvironmentIsRefusedUpFront() throws {
        let list = try scratch.write("urls.txt", server.url("/files/a.jpg") + "\n")
        let run = try ImgFetchRunner.run([list, "-o", outputDirectory, "--block-private"],
                                         environment: ["PATH": "/usr/bin:/bin", "https_proxy": "http://127.0.0.1:9"])
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("--block-private' cannot see the addresses a proxy connects to, and https_proxy is set"), run.stderr)
        XCTAssertEqual(try server.requests().count, 0)
    }
}
