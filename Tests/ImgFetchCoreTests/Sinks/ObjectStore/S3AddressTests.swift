import XCTest
@testable import ImgFetchCore

/// `s3://BUCKET/PREFIX`, the AWS environment, and the URL and path each object gets.
final class S3AddressTests: XCTestCase {
    private func location(_ text: String) throws -> S3Location {
        try S3Location.parse(text).get()
    }

    private func reason(_ text: String) -> String? {
        if case .failure(let error) = S3Location.parse(text) { return error.reason }
        return nil
    }

    func testALocationIsABucketAndAPrefixWithoutOuterSlashes() throws {
        XCTAssertEqual(try location("s3://pics"), S3Location(bucket: "pics", prefix: ""))
        XCTAssertEqual(try location("s3://pics/"), S3Location(bucket: "pics", prefix: ""))
        XCTAssertEqual(try location("s3://my.pics-1/runs/2026/"), S3Location(bucket: "my.pics-1", prefix: "runs/2026"))
        XCTAssertEqual(try location("s3://pics/run 1").key("a/b.jpg"), "run 1/a/b.jpg")
        XCTAssertEqual(try location("s3://pics").key("b.jpg"), "b.jpg")
        XCTAssertEqual(try location("s3://pics/r").url("000001.tar"), "s3://pics/r/000001.tar")
        XCTAssertEqual(try location("s3://pics/r/").description, "s3://pics/r")
    }

    func testBucketNamesFollowS3sRulesAndPrefixesHaveNoEmptyOrDotSegments() {
        XCTAssertEqual(reason("s3://"), "no bucket name (s3://BUCKET/PREFIX)")
        XCTAssertEqual(reason("s3://ab"), "a bucket name has 3 to 63 characters")
        XCTAssertEqual(reason("s3://" + String(repeating: "a", count: 64)), "a bucket name has 3 to 63 characters")
        XCTAssertEqual(reason("s3://Pics"), "a bucket name has only lowercase letters, digits, '.' and '-'")
        XCTAssertEqual(reason("s3://pic_s"), "a bucket name has only lowercase letters, digits, '.' and '-'")
        XCTAssertEqual(reason("s3://-pics"), "a bucket name starts and ends with a letter or digit")
        for bad in ["s3://pics/a//b", "s3://pics/./b", "s3://pics/a/.."] {
            XCTAssertEqual(reason(bad), "the prefix has an empty, '.' or '..' segment", bad)
        }
        XCTAssertEqual(reason("s3://pics/a\tb"), "the prefix has a control character")
        XCTAssertEqual(reason("http://pics"), "it does not start with s3://")
        // A "/" followed by a combining mark is one Character: the segments are split as bytes.
        XCTAssertEqual(reason("s3://pics/a/../\u{301}x"), "the prefix has an empty, '.' or '..' segment")
        XCTAssertEqual(reason("s3://pics/a/..\u{301}/x"), nil, "'..' and a combining mark is a name")
    }

    func testTheSchemeIsCaseInsensitive() throws {
        XCTAssertEqual(try location("S3://pics/x"), S3Location(bucket: "pics", prefix: "x"))
    }

    /// Shared files that do not exist: the machine's own `~/.aws` plays no part.
    private let noFiles = ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_CONFIG_FILE": "/nonexistent/config"]

    private func environment(_ values: [String: String]) -> [String: String] {
        values.merging(noFiles) { $1 }
    }

    func testTheEnvironmentGivesTheKeysRegionAndEndpoint() throws {
        let access = try S3Access.fromEnvironment(environment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
                                                               "AWS_SESSION_TOKEN": "T", "AWS_DEFAULT_REGION": "eu-west-1",
                                                               "AWS_ENDPOINT_URL": "http://127.0.0.1:9000//"])).get()
        XCTAssertEqual(access.region, "eu-west-1")
        XCTAssertEqual(access.endpoint, "http://127.0.0.1:9000")
        guard case .fixed(let keys, let origin)? = access.credentials.chain.source else { return XCTFail("\(access.credentials.sourceName)") }
        XCTAssertEqual(keys, AWSCredentials(accessKey: "AK", secretKey: "SK", sessionToken: "T"))
        XCTAssertEqual(origin, "the environment (AWS_ACCESS_KEY_ID)")
        // AWS_REGION wins over AWS_DEFAULT_REGION, and the S3 endpoint over the general one.
        let specific = try S3Access.fromEnvironment(environment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_REGION": "us-west-2",
                                                                 "AWS_DEFAULT_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://a",
                                                                 "AWS_ENDPOINT_URL_S3": "https://b"])).get()
        XCTAssertEqual(specific.region, "us-west-2")
        XCTAssertEqual(specific.endpoint, "https://b")
        XCTAssertEqual(try S3Access.fromEnvironment(environment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"])).get().region, "us-east-1")
    }

    func testWhatIsMissingOrWrongInTheEnvironmentIsNamed() {
        func reason(_ values: [String: String]) -> String? {
            if case .failure(let error) = S3Access.fromEnvironment(environment(values)) { return error.reason }
            return nil
        }
        let keys = ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"]
        XCTAssertEqual(reason(["AWS_ACCESS_KEY_ID": "AK"]), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
        XCTAssertEqual(reason(["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "SK"]),
                       "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
        XCTAssertEqual(reason(keys.merging(["AWS_REGION": "EU West"]) { $1 }), "AWS_REGION 'EU West' is not a region name (such as eu-west-1)")
        XCTAssertEqual(reason(keys.merging(["AWS_ENDPOINT_URL_S3": "minio:9000"]) { $1 }),
                       "AWS_ENDPOINT_URL_S3 'minio:9000' is not an http:// or https:// URL")
        XCTAssertEqual(reason(keys.merging(["AWS_ENDPOINT_URL": "http://a/?x=1"]) { $1 }),
                       "AWS_ENDPOINT_URL 'http://a/?x=1' is not an http:// or https:// URL")
        XCTAssertEqual(reason(keys.merging(["AWS_SESSION_TOKEN": "a\nb"]) { $1 }),
                       "the environment (AWS_ACCESS_KEY_ID): the session token has a control character")
        XCTAssertEqual(reason(keys.merging(["AWS_S3_ADDRESSING_STYLE": "subdomain"]) { $1 }),
                       "AWS_S3_ADDRESSING_STYLE 'subdomain' is not auto, path or virtual")
    }

    private func access(_ region: String = "us-east-1", endpoint: String? = nil, style: S3Access.AddressingStyle = .auto) -> S3Access {
        S3Access(credentials: CredentialProvider(AWSCredentials(accessKey: "a", secretKey: "s")), region: region, endpoint: endpoint,
                 addressingStyle: style)
    }

    func testObjectURLsArePathStyleOnAnEndpointAndVirtualHostedOnAWS() {
        let aws = access("eu-west-1")
        XCTAssertEqual(aws.objectURL(bucket: "pics", key: "r/a b.jpg"), "https://pics.s3.eu-west-1.amazonaws.com/r/a%20b.jpg")
        // A dotted bucket cannot be a host name under AWS's wildcard certificate.
        XCTAssertEqual(aws.objectURL(bucket: "my.pics", key: "a.jpg"), "https://s3.eu-west-1.amazonaws.com/my.pics/a.jpg")
        let local = access(endpoint: "http://127.0.0.1:9000")
        XCTAssertEqual(local.objectURL(bucket: "pics", key: "a.jpg"), "http://127.0.0.1:9000/pics/a.jpg")
        // The bucket itself (its HEAD before a run).
        XCTAssertEqual(local.objectURL(bucket: "pics", key: ""), "http://127.0.0.1:9000/pics")
        XCTAssertEqual(aws.objectURL(bucket: "pics", key: ""), "https://pics.s3.eu-west-1.amazonaws.com/")
    }

    func testTheAddressingStyleCanBeChosen() throws {
        let virtual = access(endpoint: "https://store.example:9000/base", style: .virtual)
        XCTAssertEqual(virtual.objectURL(bucket: "pics", key: "a.jpg"), "https://pics.store.example:9000/base/a.jpg")
        XCTAssertEqual(virtual.objectURL(bucket: "pics", key: ""), "https://pics.store.example:9000/base/")
        XCTAssertEqual(access("eu-west-1", style: .path).objectURL(bucket: "pics", key: "a.jpg"), "https://s3.eu-west-1.amazonaws.com/pics/a.jpg")
        let fromEnvironment = try S3Access.fromEnvironment(environment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
                                                                        "AWS_S3_ADDRESSING_STYLE": "Virtual"])).get()
        XCTAssertEqual(fromEnvironment.addressingStyle, .virtual)
    }

    func testQueryValuesEncodeSlashesToo() {
        XCTAssertEqual(S3Access.encodeQueryValue("a/b+c=d~"), "a%2Fb%2Bc%3Dd~")
    }

    func testTheCompletionsXMLIsEscapedAndItsETagUnescaped() {
        XCTAssertEqual(XMLText.escaped("\"9b2c-3\"&<x>"), "&quot;9b2c-3&quot;&amp;&lt;x&gt;")
        XCTAssertEqual(XMLText.unescaped("&quot;9b2c-3&quot;&amp;amp;&#34;"), "\"9b2c-3\"&amp;\"")
    }

    func testKeysAreEncodedOnceWithEverythingButUnreservedBytesAndSlashes() {
        XCTAssertEqual(S3Access.encodeKey("a/b-c_d.e~f/G9"), "a/b-c_d.e~f/G9")
        XCTAssertEqual(S3Access.encodeKey("a=b+c d&é%"), "a%3Db%2Bc%20d%26%C3%A9%25")
        XCTAssertEqual(S3Access.encodeKey("(1)[2]"), "%281%29%5B2%5D")
    }

    func testAStoresErrorBodyBecomesItsCodeAndMessage() {
        let body = Array("<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access\nDenied</Message></Error>".utf8)
        XCTAssertEqual(XMLText.errorText(body), " AccessDenied: Access Denied")
        XCTAssertEqual(XMLText.errorText(Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)), " NoSuchBucket")
        XCTAssertEqual(XMLText.errorText(Array("<Message><![CDATA[slow down]]></Message>".utf8)), " slow down")
        XCTAssertEqual(XMLText.errorText(Array("<html>bad gateway</html>".utf8)), "")
        XCTAssertEqual(XMLText.errorText([]), "")
        XCTAssertEqual(XMLText.element("Code", in: Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)), "NoSuchBucket")
        XCTAssertNil(XMLText.element("Code", in: Array("<Error><Code></Code></Error>".utf8)))
        XCTAssertNil(XMLText.element("Code", in: Array("<Code>unclosed".utf8)))
    }
}
