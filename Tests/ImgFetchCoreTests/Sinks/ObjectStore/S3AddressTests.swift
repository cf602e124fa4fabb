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

    func testTheEnvironmentGivesTheKeysRegionAndEndpoint() throws {
        let access = try S3Access.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
                                                   "AWS_SESSION_TOKEN": "T", "AWS_DEFAULT_REGION": "eu-west-1",
                                                   "AWS_ENDPOINT_URL": "http://127.0.0.1:9000//"]).get()
        XCTAssertEqual(access, S3Access(accessKey: "AK", secretKey: "SK", sessionToken: "T", region: "eu-west-1",
                                        endpoint: "http://127.0.0.1:9000"))
        // AWS_REGION wins over AWS_DEFAULT_REGION, and the S3 endpoint over the general one.
        let specific = try S3Access.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_REGION": "us-west-2",
                                                     "AWS_DEFAULT_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://a",
                                                     "AWS_ENDPOINT_URL_S3": "https://b"]).get()
        XCTAssertEqual(specific.region, "us-west-2")
        XCTAssertEqual(specific.endpoint, "https://b")
        XCTAssertEqual(try S3Access.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"]).get().region, "us-east-1")
    }

    func testWhatIsMissingOrWrongInTheEnvironmentIsNamed() {
        func reason(_ environment: [String: String]) -> String? {
            if case .failure(let error) = S3Access.fromEnvironment(environment) { return error.reason }
            return nil
        }
        let keys = ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK"]
        XCTAssertEqual(reason(["AWS_ACCESS_KEY_ID": "AK"]), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set to write to object storage")
        XCTAssertEqual(reason(["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "SK"]),
                       "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set to write to object storage")
        XCTAssertEqual(reason(keys.merging(["AWS_REGION": "EU West"]) { $1 }), "AWS_REGION 'EU West' is not a region name (such as eu-west-1)")
        XCTAssertEqual(reason(keys.merging(["AWS_ENDPOINT_URL_S3": "minio:9000"]) { $1 }),
                       "AWS_ENDPOINT_URL_S3 'minio:9000' is not an http:// or https:// URL")
        XCTAssertEqual(reason(keys.merging(["AWS_ENDPOINT_URL": "http://a/?x=1"]) { $1 }),
                       "AWS_ENDPOINT_URL 'http://a/?x=1' is not an http:// or https:// URL")
        XCTAssertEqual(reason(keys.merging(["AWS_SESSION_TOKEN": "a\nb"]) { $1 }), "AWS_SESSION_TOKEN has a control character")
    }

    func testObjectURLsArePathStyleOnAnEndpointAndVirtualHostedOnAWS() {
        let aws = S3Access(accessKey: "a", secretKey: "s", region: "eu-west-1")
        XCTAssertEqual(aws.objectURL(bucket: "pics", key: "r/a b.jpg"), "https://pics.s3.eu-west-1.amazonaws.com/r/a%20b.jpg")
        // A dotted bucket cannot be a host name under AWS's wildcard certificate.
        XCTAssertEqual(aws.objectURL(bucket: "my.pics", key: "a.jpg"), "https://s3.eu-west-1.amazonaws.com/my.pics/a.jpg")
        let local = S3Access(accessKey: "a", secretKey: "s", endpoint: "http://127.0.0.1:9000")
        XCTAssertEqual(local.objectURL(bucket: "pics", key: "a.jpg"), "http://127.0.0.1:9000/pics/a.jpg")
        // The bucket itself (its HEAD before a run).
        XCTAssertEqual(local.objectURL(bucket: "pics", key: ""), "http://127.0.0.1:9000/pics")
        XCTAssertEqual(aws.objectURL(bucket: "pics", key: ""), "https://pics.s3.eu-west-1.amazonaws.com/")
    }

    func testQueryValuesEncodeSlashesToo() {
        XCTAssertEqual(S3Access.encodeQueryValue("a/b+c=d~"), "a%2Fb%2Bc%3Dd~")
    }

    func testTheCompletionsXMLIsEscapedAndItsETagUnescaped() {
        XCTAssertEqual(S3Client.xmlEscaped("\"9b2c-3\"&<x>"), "&quot;9b2c-3&quot;&amp;&lt;x&gt;")
        XCTAssertEqual(S3Client.xmlUnescaped("&quot;9b2c-3&quot;&amp;amp;&#34;"), "\"9b2c-3\"&amp;\"")
    }

    func testKeysAreEncodedOnceWithEverythingButUnreservedBytesAndSlashes() {
        XCTAssertEqual(S3Access.encodeKey("a/b-c_d.e~f/G9"), "a/b-c_d.e~f/G9")
        XCTAssertEqual(S3Access.encodeKey("a=b+c d&é%"), "a%3Db%2Bc%20d%26%C3%A9%25")
        XCTAssertEqual(S3Access.encodeKey("(1)[2]"), "%281%29%5B2%5D")
    }

    func testAStoresErrorBodyBecomesItsCodeAndMessage() {
        let body = Array("<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access\nDenied</Message></Error>".utf8)
        XCTAssertEqual(S3Client.errorText(body), " AccessDenied: Access Denied")
        XCTAssertEqual(S3Client.errorText(Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)), " NoSuchBucket")
        XCTAssertEqual(S3Client.errorText(Array("<Message><![CDATA[slow down]]></Message>".utf8)), " slow down")
        XCTAssertEqual(S3Client.errorText(Array("<html>bad gateway</html>".utf8)), "")
        XCTAssertEqual(S3Client.errorText([]), "")
        XCTAssertEqual(S3Client.errorElement("Code", in: Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)), "NoSuchBucket")
        XCTAssertNil(S3Client.errorElement("Code", in: Array("<Error><Code></Code></Error>".utf8)))
        XCTAssertNil(S3Client.errorElement("Code", in: Array("<Code>unclosed".utf8)))
    }
}
