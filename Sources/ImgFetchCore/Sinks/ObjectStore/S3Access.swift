import Glibc

/// How to reach and sign for an S3-compatible object store, as the AWS CLI and SDKs find it:
/// keys from the standard credential chain (`CredentialChain`: the environment, web identity,
/// the shared files' profile, a container's endpoint, instance metadata), `AWS_REGION` (or
/// `AWS_DEFAULT_REGION`, or the profile's `region`; default `us-east-1`), and `AWS_ENDPOINT_URL_S3`
/// or `AWS_ENDPOINT_URL` for another store than AWS (MinIO, Ceph, moto, R2, …), and
/// `AWS_CA_BUNDLE` (or the profile's `ca_bundle`) for a store whose certificate is signed by a
/// private CA (a PEM file; default the system's CAs).
///
/// Addressing (`AWS_S3_ADDRESSING_STYLE`, or the profile's `s3.addressing_style`): `path`
/// (`ENDPOINT/BUCKET/KEY`), `virtual` (`BUCKET.ENDPOINT-HOST/KEY`) or `auto`, the default: path
/// style for a custom endpoint; for AWS, the virtual-hosted address
/// (`https://BUCKET.s3.REGION.amazonaws.com/KEY`), or the path-style one for a bucket name with
/// a dot (which a wildcard certificate cannot cover).
public struct S3Access: Sendable, Equatable {
    public enum AddressingStyle: String, Sendable, CaseIterable {
        case auto, path, virtual
    }

    public let credentials: CredentialProvider
    public let region: String
    /// `scheme://host[:port][/path]`, without a trailing slash; nil: AWS itself.
    public let endpoint: String?
    /// The CA certificates (PEM) the store's certificate is checked against; nil: the system's.
    public let caBundle: String?
    public let addressingStyle: AddressingStyle

    public init(credentials: CredentialProvider, region: String = "us-east-1", endpoint: String? = nil, caBundle: String? = nil,
                addressingStyle: AddressingStyle = .auto) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
        self.caBundle = caBundle
        self.addressingStyle = addressingStyle
    }

    /// The access `environment` and the AWS shared files configure, or what is missing or wrong,
    /// naming the variable or the file. Nothing is fetched: the keys are, when first needed.
    public static func fromEnvironment(_ environment: [String: String]) -> Result<S3Access, S3Location.ParseError> {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        let files: AWSConfigFiles
        do {
            files = try AWSConfigFiles.load(environment)
        } catch {
            return .failure(.init(error.reason))
        }
        let profileName = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE") ?? "default"
        let profile = files.profile(profileName) ?? [:]
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? profile["region"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
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
        let styleText = value("AWS_S3_ADDRESSING_STYLE") ?? profile["s3.addressing_style"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
        guard let style = AddressingStyle(rawValue: styleText.lowercased()) else {
            return .failure(.init("AWS_S3_ADDRESSING_STYLE '\(styleText)' is not auto, path or virtual"))
        }
        let bundle = value("AWS_CA_BUNDLE") ?? profile["ca_bundle"].flatMap { $0.isEmpty ? nil : $0 }
        if let bundle, access(bundle, R_OK) != 0 {
            return .failure(.init("AWS_CA_BUNDLE '\(bundle)' cannot be read: \(Errno.describe())"))
        }
        let chain: CredentialChain
        do {
            chain = try CredentialChain.choose(environment, files: files, region: region)
        } catch {
            return .failure(.init(error.reason))
        }
        if case .fixed(let keys, _)? = chain.source, let problem = keys.problem {
            return .failure(.init("\(chain.source!.name): \(problem)"))
        }
        return .success(S3Access(credentials: CredentialProvider(chain: chain), region: region, endpoint: endpoint,
                                 caBundle: bundle, addressingStyle: style))
    }

    /// Accesses are equal when they are configured alike: the same store, and keys from the same source.
    public static func == (left: S3Access, right: S3Access) -> Bool {
        left.region == right.region && left.endpoint == right.endpoint && left.caBundle == right.caBundle
            && left.addressingStyle == right.addressingStyle && left.credentials.sourceName == right.credentials.sourceName
    }

    /// The HTTP(S) URL of object `key` in `bucket`; with an empty key, the bucket's own.
    public func objectURL(bucket: String, key: String) -> String {
        let path = key.isEmpty ? "" : Self.encodeKey(key)
        if let endpoint {
            if addressingStyle == .virtual, let split = endpoint.firstRange(of: "://") {
                return "\(endpoint[..<split.upperBound])\(bucket).\(endpoint[split.upperBound...])/\(path)"
            }
            return key.isEmpty ? "\(endpoint)/\(bucket)" : "\(endpoint)/\(bucket)/\(path)"
        }
        if addressingStyle == .path || (addressingStyle == .auto && bucket.contains(".")) {
            return key.isEmpty ? "https://s3.\(region).amazonaws.com/\(bucket)" : "https://s3.\(region).amazonaws.com/\(bucket)/\(path)"
        }
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
