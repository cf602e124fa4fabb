import Foundation
import XCTest

/// Keys found as the AWS CLI and SDKs find them, each source against moto (signatures checked)
/// behind the project's S3 proxy: a profile of the shared files, web identity (STS
/// AssumeRoleWithWebIdentity, as EKS pods get keys), a profile's role with its source profile
/// (STS AssumeRole), `credential_process`, a container's endpoint and IMDSv2; keys that expire
/// during the run are renewed; and with no source, one line names what was tried.
final class AWSCredentialTests: EndToEndTestCase {
    private var store: S3TestStore!
    private var images: [String] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try S3TestStore()
        images = try server.addSamples(count: 1, seed: 23)
    }

    override func tearDown() {
        store?.stop()
        super.tearDown()
    }

    /// The store's endpoint and region, and no keys: what a pod or an instance has.
    private var keyless: [String: String] {
        ["AWS_ENDPOINT_URL": store.endpoint, "AWS_REGION": "us-east-1", "PATH": "/usr/bin:/bin",
         "HOME": scratch.file("home").path, "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9"]
    }

    private func list() throws -> String {
        try scratch.write("urls.txt", images.map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
    }

    /// Runs into `s3://pics/PREFIX` with `environment`, and checks that every image is now an object there.
    @discardableResult
    private func runAndCheck(_ prefix: String, _ environment: [String: String], _ extra: [String] = []) throws -> Execution {
        let run = try ImgFetchRunner.run([try list(), "--jsonl", "--work-dir", scratch.file("work-" + prefix).path, "-o", "s3://pics/" + prefix] + extra,
                                         environment: environment)
        XCTAssertEqual(run.exitCode, 0, run.stderr + run.stdout)
        XCTAssertEqual(Set(try store.objects(prefix: prefix + "/").keys), Set(images.map { prefix + "/" + $0 }), run.stderr)
        return run
    }

    /// The keys the store's PUTs under `prefix` were signed with.
    private func signers(_ prefix: String) throws -> Set<String> {
        Set(try store.requests().filter { $0.method == "PUT" && $0.key.hasPrefix(prefix + "/") }.map(\.signer))
    }

    private func writeHomeFile(_ name: String, _ text: String) throws {
        let directory = scratch.file("home/.aws")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func testAProfileOfTheSharedFilesGivesTheKeysAndTheRegion() throws {
        try writeHomeFile("credentials", "[default]\naws_access_key_id = nothing\naws_secret_access_key = nothing\n\n"
            + "[p2]\naws_access_key_id = \(store.accessKey)\n# a comment\naws_secret_access_key = \(store.secretKey)\n")
        try writeHomeFile("config", "[profile p2]\nregion = us-east-1\ns3 =\n  addressing_style = path\n")
        var environment = keyless
        environment["AWS_PROFILE"] = "p2"
        environment["AWS_REGION"] = nil
        try runAndCheck("profile", environment)
        XCTAssertEqual(try signers("profile"), [store.accessKey])
        // A profile named but in neither file is an error before anything starts, as with the AWS CLI.
        environment["AWS_PROFILE"] = "p3"
        let missing = try ImgFetchRunner.run([try list(), "-o", "s3://pics/profile"], environment: environment)
        XCTAssertEqual(missing.exitCode, 2)
        XCTAssertTrue(missing.stderr.contains("profile p3 (AWS_PROFILE) is in neither"), missing.stderr)
    }

    func testWebIdentityAssumesTheRoleWithTheTokenFile() throws {
        let token = try scratch.write("token", "web-identity-token\n")
        var environment = keyless
        environment["AWS_WEB_IDENTITY_TOKEN_FILE"] = token
        environment["AWS_ROLE_ARN"] = store.roleArn
        try runAndCheck("irsa", environment)
        let sts = try store.requests().filter { $0.key == "sts:AssumeRoleWithWebIdentity" }
        XCTAssertEqual(sts.map(\.status), [200])
        let signers = try signers("irsa")
        XCTAssertEqual(signers.count, 1)
        XCTAssertFalse(signers.contains(store.accessKey), "\(signers)")
        // A token STS refuses stops the run before any download, with STS's own words.
        try "not-the-token\n".write(toFile: token, atomically: true, encoding: .utf8)
        let refused = try ImgFetchRunner.run([try list(), "-o", "s3://pics/irsa2"], environment: environment)
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("STS AssumeRoleWithWebIdentity for \(store.roleArn)"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("InvalidIdentityToken"), refused.stderr)
        XCTAssertEqual(try server.sentBodies().filter { $0.path.hasPrefix("/files/") }.count, images.count)
    }

    func testAProfilesRoleIsAssumedWithItsSourceProfilesKeys() throws {
        try writeHomeFile("credentials", "[base]\naws_access_key_id = \(store.accessKey)\naws_secret_access_key = \(store.secretKey)\n")
        try writeHomeFile("config", "[profile uploader]\nrole_arn = \(store.roleArn)\nsource_profile = base\nrole_session_name = nightly\n")
        var environment = keyless
        environment["AWS_PROFILE"] = "uploader"
        try runAndCheck("role", environment)
        XCTAssertEqual(try store.requests().filter { $0.key == "sts:AssumeRole" }.map(\.status), [200])
        XCTAssertFalse(try signers("role").contains(store.accessKey))
    }

    func testCredentialProcessPrintsTheKeys() throws {
        let script = try scratch.write("creds.sh", """
            #!/bin/sh
            [ "$1" = "--for" ] && [ "$2" = "two words" ] || { echo "wrong arguments: $*" >&2; exit 3; }
            printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s"}' '\(store.accessKey)' '\(store.secretKey)'
            """)
        chmod(script, 0o755)
        try writeHomeFile("config", "[default]\ncredential_process = \(script) --for \"two words\"\n")
        try runAndCheck("process", keyless)
        // A process that fails: its exit status and its last line of stderr.
        try writeHomeFile("config", "[default]\ncredential_process = \(script) --for one\n")
        let failed = try ImgFetchRunner.run([try list(), "-o", "s3://pics/process2"], environment: keyless)
        XCTAssertEqual(failed.exitCode, 2)
        XCTAssertTrue(failed.stderr.contains("credential_process of profile default: \(script) exited with status 3: wrong arguments: --for one"),
                      failed.stderr)
    }

    func testAContainersEndpointGivesTheKeys() throws {
        let tokenFile = try scratch.write("container-token", "container-token")
        var environment = keyless
        environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = store.credentialsEndpoint + "/container"
        environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = tokenFile
        try runAndCheck("container", environment)
        XCTAssertEqual(try store.requests().filter { $0.key == "endpoint:/container" }.map(\.status), [200])
        // Over http, only loopback or AWS's own endpoint: keys must not cross a network in the clear.
        environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://example.com/creds"
        let refused = try ImgFetchRunner.run([try list(), "-o", "s3://pics/container2"], environment: environment)
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertTrue(refused.stderr.contains("only a loopback address or AWS's container endpoint"), refused.stderr)
    }

    func testInstanceMetadataVersion2GivesTheKeys() throws {
        var environment = keyless
        environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = store.credentialsEndpoint
        try runAndCheck("imds", environment)
        let asked = try store.requests().filter { $0.key.hasPrefix("endpoint:") }.map { "\($0.method) \($0.key)" }
        XCTAssertEqual(asked, ["PUT endpoint:/latest/api/token", "GET endpoint:/latest/meta-data/iam/security-credentials/",
                               "GET endpoint:/latest/meta-data/iam/security-credentials/imgfetch-role"])
    }

    func testKeysThatExpireDuringTheRunAreRenewedBeforeTheStoreRefusesThem() throws {
        // Keys the store refuses 6 s after they were handed out, and whose Expiration says so with
        // ten minutes to spare; each upload takes a second, so the run outlives two sets of keys.
        store.stop()
        store = try S3TestStore(keysExpireAfter: 6)
        images = try server.addSamples(count: 3, seed: 29)
        try store.delayRequests(method: "PUT", suffix: "", delay: 1)
        var environment = keyless
        environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = store.credentialsEndpoint
        try runAndCheck("renewed", environment, ["-j", "1"])
        let puts = try store.requests().filter { $0.method == "PUT" && $0.key.hasPrefix("renewed/") }
        XCTAssertEqual(puts.count, images.count)
        XCTAssertTrue(puts.allSatisfy { $0.status == 200 }, "\(puts)")
        XCTAssertGreaterThan(Set(puts.map(\.signer)).count, 1, "\(puts)")
        XCTAssertGreaterThan(try store.requests().filter { $0.key == "endpoint:/latest/api/token" }.count, 1)
    }

    func testWithNoSourceOneLineNamesEverySourceTried() throws {
        let run = try ImgFetchRunner.run([try list(), "-o", "s3://pics/none"], environment: keyless)
        XCTAssertEqual(run.exitCode, 2)
        XCTAssertTrue(run.stderr.contains("s3://pics/none: no AWS credentials: tried environment (no AWS_ACCESS_KEY_ID), "
                                          + "web identity (no AWS_WEB_IDENTITY_TOKEN_FILE), shared files (no profile default in "), run.stderr)
        XCTAssertTrue(run.stderr.contains("container (no AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI), then instance metadata at http://127.0.0.1:9"),
                      run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        XCTAssertEqual(try server.sentBodies().filter { $0.path.hasPrefix("/files/") }.count, 0)
    }
}
