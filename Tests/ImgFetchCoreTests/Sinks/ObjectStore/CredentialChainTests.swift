import XCTest
@testable import ImgFetchCore

/// Which source of the AWS credential chain a configuration chooses, read from the environment
/// and the shared files without any request, and the files' syntax as the AWS CLI reads it.
final class CredentialChainTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "imgfetch-credentials-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        XCTAssertEqual(mkdir(directory, 0o700), 0)
    }

    override func tearDown() {
        _ = try? FileManager.default.removeItem(atPath: directory)
    }

    private func files(credentials: String = "", config: String = "") throws -> [String: String] {
        try credentials.write(toFile: directory + "/credentials", atomically: true, encoding: .utf8)
        try config.write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        return ["AWS_SHARED_CREDENTIALS_FILE": directory + "/credentials", "AWS_CONFIG_FILE": directory + "/config"]
    }

    private func chain(_ environment: [String: String]) throws -> CredentialChain {
        try CredentialChain.choose(environment, files: AWSConfigFiles.load(environment), region: "eu-west-1")
    }

    private func failure(_ environment: [String: String]) -> String? {
        do {
            _ = try chain(environment)
            return nil
        } catch let error as CredentialChain.Failure {
            return error.reason
        } catch let error as AWSConfigFiles.Failure {
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    func testTheFilesAreReadAsTheAWSCLIReadsThem() throws {
        let text = "# comment\n[default]\nregion = eu-west-1\r\n; another\n[profile p2]\nrole_arn=arn:aws:iam::1:role/r\n"
            + "s3 =\n  addressing_style = virtual\n\tmax_concurrent_requests = 4\nsource_profile = base\n[sso-session x]\nsso_region = us-east-1\n"
        let profiles = try AWSConfigFiles.parse(text, isConfig: true)
        XCTAssertEqual(profiles["default"], ["region": "eu-west-1"])
        XCTAssertEqual(profiles["p2"], ["role_arn": "arn:aws:iam::1:role/r", "s3": "", "s3.addressing_style": "virtual",
                                        "s3.max_concurrent_requests": "4", "source_profile": "base"])
        XCTAssertNil(profiles["sso-session x"])
        // In the credentials file, a section is the profile's name itself.
        XCTAssertEqual(try AWSConfigFiles.parse("[p2]\naws_access_key_id = A\n", isConfig: false)["p2"], ["aws_access_key_id": "A"])
        XCTAssertThrowsError(try AWSConfigFiles.parse("key = value\n", isConfig: true))
        XCTAssertThrowsError(try AWSConfigFiles.parse("[default\n", isConfig: true))
    }

    func testTheSourcesAreChosenInTheDocumentedOrder() throws {
        let files = try files(credentials: "[default]\naws_access_key_id = FILE\naws_secret_access_key = S\n")
        let keys = ["AWS_ACCESS_KEY_ID": "ENV", "AWS_SECRET_ACCESS_KEY": "S"]
        let identity = ["AWS_WEB_IDENTITY_TOKEN_FILE": "/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"]
        let container = ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x"]
        func name(_ environment: [String: String]) throws -> String? { try chain(environment).source?.name }
        let all = files.merging(keys) { $1 }.merging(identity) { $1 }.merging(container) { $1 }
        XCTAssertEqual(try name(all), "the environment (AWS_ACCESS_KEY_ID)")
        XCTAssertEqual(try name(all.filter { keys[$0.key] == nil }), "web identity (role arn:aws:iam::1:role/r, token file /token)")
        XCTAssertTrue(try name(files.merging(container) { $1 })?.hasPrefix("profile default of ") == true)
        let noFiles = try self.files()
        XCTAssertEqual(try name(noFiles.merging(container) { $1 }), "container credentials (http://169.254.170.2/v2/credentials/x)")
        XCTAssertEqual(try name(noFiles), "instance metadata (http://169.254.169.254)")
        XCTAssertNil(try chain(noFiles.merging(["AWS_EC2_METADATA_DISABLED": "true"]) { $1 }).source)
        XCTAssertEqual(try chain(noFiles).tried.count, 4)
    }

    func testAProfilesRoleIsAssumedWithItsSource() throws {
        let environment = try files(credentials: "[base]\naws_access_key_id = A\naws_secret_access_key = S\n",
                                    config: "[profile uploader]\nrole_arn = arn:aws:iam::1:role/up\nsource_profile = base\nexternal_id = x\n"
                                        + "[profile chained]\nrole_arn = arn:aws:iam::1:role/two\nsource_profile = uploader\n"
                                        + "[profile loop]\nrole_arn = arn:aws:iam::1:role/l\nsource_profile = loop2\n"
                                        + "[profile loop2]\nrole_arn = arn:aws:iam::1:role/l2\nsource_profile = loop\n"
                                        + "[profile proc]\ncredential_process = /bin/creds --x\n"
                                        + "[profile env]\nrole_arn = arn:aws:iam::1:role/e\ncredential_source = Environment\n")
        guard case .assumeRole(let role)? = try chain(environment.merging(["AWS_PROFILE": "uploader"]) { $1 }).source else {
            return XCTFail("not a role")
        }
        XCTAssertEqual(role.roleArn, "arn:aws:iam::1:role/up")
        XCTAssertEqual(role.externalID, "x")
        XCTAssertEqual(role.sts, CredentialSource.STSEndpoint(url: "https://sts.eu-west-1.amazonaws.com", region: "eu-west-1"))
        guard case .fixed(let keys, _) = role.source else { return XCTFail("not the base keys") }
        XCTAssertEqual(keys.accessKey, "A")
        guard case .assumeRole(let outer)? = try chain(environment.merging(["AWS_PROFILE": "chained"]) { $1 }).source,
              case .assumeRole(let inner) = outer.source else { return XCTFail("not a chain of roles") }
        XCTAssertEqual(inner.roleArn, "arn:aws:iam::1:role/up")
        XCTAssertTrue(failure(environment.merging(["AWS_PROFILE": "loop"]) { $1 })?.contains("loops back") == true)
        guard case .process(let command, "proc")? = try chain(environment.merging(["AWS_PROFILE": "proc"]) { $1 }).source else {
            return XCTFail("not a process")
        }
        XCTAssertEqual(command, "/bin/creds --x")
        XCTAssertEqual(failure(environment.merging(["AWS_PROFILE": "env"]) { $1 }),
                       "profile env: credential_source Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
        XCTAssertTrue(failure(environment.merging(["AWS_PROFILE": "nope"]) { $1 })?.hasPrefix("profile nope (AWS_PROFILE) is in neither") == true)
    }

    func testBadSettingsAreNamed() throws {
        let none = try files()
        XCTAssertEqual(failure(none.merging(["AWS_ROLE_ARN": "arn"]) { $1 }), "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together")
        XCTAssertEqual(failure(none.merging(["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "v2"]) { $1 }),
                       "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI 'v2' does not start with /")
        XCTAssertEqual(failure(none.merging(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://10.0.0.1/creds"]) { $1 }),
                       "AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://10.0.0.1/creds': over http, only a loopback address or AWS's container endpoint")
        XCTAssertNil(failure(none.merging(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "https://10.0.0.1/creds"]) { $1 }))
        XCTAssertEqual(failure(none.merging(["AWS_METADATA_SERVICE_TIMEOUT": "soon"]) { $1 }),
                       "AWS_METADATA_SERVICE_TIMEOUT 'soon' is not a number of seconds from 0 to 60")
        let broken = try files(config: "[default]\nregion\n")
        XCTAssertEqual(failure(broken), "\(directory)/config: line 2: expected key = value")
    }

    func testCredentialProcessCommandsAreSplitAsAShellWould() {
        XCTAssertEqual(CredentialProcess.words("/bin/creds --profile 'a b' \"c \\\"d\\\"\" e\\ f"),
                       ["/bin/creds", "--profile", "a b", "c \"d\"", "e f"])
        XCTAssertEqual(CredentialProcess.words("x ''"), ["x", ""])
        XCTAssertNil(CredentialProcess.words("x 'open"))
    }

    func testExpirationTimesAreRead() {
        XCTAssertEqual(ISO8601Date.parse("1970-01-01T00:00:10Z"), 10)
        XCTAssertEqual(ISO8601Date.parse("2026-12-04T05:10:06.5Z"), 1_796_361_006.5)
        XCTAssertEqual(ISO8601Date.parse("2026-12-04T06:10:06+01:00"), 1_796_361_006)
        XCTAssertNil(ISO8601Date.parse("2026-12-04 05:10"))
        XCTAssertNil(ISO8601Date.parse("2026-13-04T05:10:06Z"))
    }

    func testKeysAreReadFromTheEndpointsJSON() throws {
        let body = Array(#"{"Code": "Success", "AccessKeyId": "A", "SecretAccessKey": "S", "Token": "T", "Expiration": "1970-01-01T00:01:00Z"}"#.utf8)
        XCTAssertEqual(try CredentialFetcher.keys(fromJSON: body, tokenField: "Token", what: "x"),
                       AWSCredentials(accessKey: "A", secretKey: "S", sessionToken: "T", expiration: 60))
        XCTAssertThrowsError(try CredentialFetcher.keys(fromJSON: Array(#"{"AccessKeyId": "A"}"#.utf8), tokenField: "Token", what: "x"))
        XCTAssertThrowsError(try CredentialFetcher.keys(fromJSON: Array("<html>".utf8), tokenField: "Token", what: "x"))
    }
}
