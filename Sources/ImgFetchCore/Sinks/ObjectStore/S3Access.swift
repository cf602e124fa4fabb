import Glibc

/// How to reach and sign for an S3-compatible object store, from the standard AWS environment:
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (temporary credentials),
/// `AWS_REGION` (or `AWS_DEFAULT_REGION`; default `us-east-1`), and `AWS_ENDPOINT_URL_S3` or
/// `AWS_ENDPOINT_URL` for another store than AWS (MinIO, Ceph, moto, R2, …), which is then
/// addressed path-style (`ENDPOINT/BUCKET/KEY`), and `AWS_CA_BUNDLE` for a store whose certificate
/// is signed by a private CA (a PEM file; default the system's CAs). Without an endpoint, AWS's virtual-hosted
/// address (`https://BUCKET.s3.REGION.amazonaws.com/KEY`), or its path-style one for a bucket
/// name with a dot (which a wildcard certificate cannot cover). Profiles, `~/.aws` files and
/// instance metadata are not read.
public struct S3Access: Sendable, Equatable {
    public let accessKey: String
    public let secretKey: String
    public let sessionToken: String?
    public let region: String
    /// `scheme://host[:port][/path]`, without a trailing slash; nil: AWS itself.
    public let endpoint: String?
    /// The CA certificates (PEM) the store's certificate is checked against; nil: the system's.
    public let caBundle: String?

    public init(accessKey: String, secretKey: String, sessionToken: String? = nil, region: String = "us-east-1",
                endpoint: String? = nil, caBundle: String? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.region = region
        self.endpoint = endpoint
        self.caBundle = caBundle
    }

    /// The access in `environment`, or what is missing or wrong, naming the variable.
    public static func fromEnvironment(_ environment: [String: String]) -> Result<S3Access, S3Location.ParseError> {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        guard let accessKey = value("AWS_ACCESS_KEY_ID"), let secretKey = value("AWS_SECRET_ACCESS_KEY") else {
            return .failure(.init("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set to write to object storage"))
        }
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
        guard region.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) else {
            return .failure(.init("AWS_REGION '\(region)' is not a region name (such as eu-west-1)"))
        }
        var endpoint = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL")
        if let given = endpoint {
            let name = value("AWS_ENDPOINT_URL_S3") != nil ? "AWS_ENDPOINT_URL_S3" : "AWS_ENDPOINT_URL"
            guard given.hasPrefix("http://") || given.hasPrefix("https://"),
                  given.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !given.contains("?"), !given.contains("#") else {
                return .failure(.init("\(name) '\(given)' is not an http:// or https:// URL"))
            }
            while endpoint!.hasSuffix("/") { endpoint!.removeLast() }
        }
        let token = value("AWS_SESSION_TOKEN")
        if let token, token.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .failure(.init("AWS_SESSION_TOKEN has a control character"))
        }
        let bundle = value("AWS_CA_BUNDLE")
        if let bundle, access(bundle, R_OK) != 0 {
            return .failure(.init("AWS_CA_BUNDLE '\(bundle)' cannot be read: \(Errno.describe())"))
        }
        return .success(S3Access(accessKey: accessKey, secretKey: secretKey, sessionToken: token,
                                 region: region, endpoint: endpoint, caBundle: bundle))
    }

    /// The HTTP(S) URL of object `key` in `bucket`; with an empty key, the bucket's own.
    public func objectURL(bucket: String, key: String) -> String {
        if key.isEmpty, let endpoint { return "\(endpoint)/\(bucket)" }
        let path = Self.encodeKey(key)
        if let endpoint { return "\(endpoint)/\(bucket)/\(path)" }
        if bucket.contains(".") { return "https://s3.\(region).amazonaws.com/\(bucket)/\(path)" }
        return "https://\(bucket).s3.\(region).amazonaws.com/\(path)"
    }

    /// A query value as S3's signature expects it: every byte but the unreserved ones encoded.
    public static func encodeQueryValue(_ value: String) -> String {
        encode(value, keepingSlashes: false)
    }

    /// A key as S3's signature expects it in the path: every byte but the unreserved ones
    /// (`A-Z a-z 0-9 - . _ ~`) and `/` percent-encoded, with uppercase hex.
    public static func encodeKey(_ key: String) -> String {
        encode(key, keepingSlashes: true)
    }

    private static func encode(_ text: String, keepingSlashes: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E:
                out.append(byte)
            case 0x2F where keepingSlashes:
                out.append(byte)
            default:
                out.append(0x25)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
