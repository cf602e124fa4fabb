/// Where a run's AWS keys come from: the source of the standard chain (`CredentialChain`) that
/// is configured. Each but `fixed` is asked again before its keys expire (`CredentialProvider`).
public indirect enum CredentialSource: Sendable {
    /// Keys given as they are: the environment's, or a profile's `aws_access_key_id`.
    case fixed(AWSCredentials, origin: String)
    /// STS `AssumeRoleWithWebIdentity` with the token in a file (EKS pods' IRSA).
    case webIdentity(WebIdentity)
    /// A profile's `credential_process`: a command that prints the keys as JSON.
    case process(command: String, profile: String)
    /// STS `AssumeRole`, signed with another source's keys (`role_arn` with `source_profile` or
    /// `credential_source`).
    case assumeRole(AssumeRole)
    /// An ECS task's or EKS Pod Identity's credential endpoint.
    case container(Container)
    /// EC2 instance metadata, version 2: a token first, then the role's keys.
    case instanceMetadata(InstanceMetadata)

    public struct STSEndpoint: Sendable, Equatable {
        /// `scheme://host[:port]`, without a trailing slash.
        public let url: String
        public let region: String
    }

    public struct WebIdentity: Sendable {
        public let tokenFile: String
        public let roleArn: String
        public let sessionName: String
        public let sts: STSEndpoint
    }

    public struct AssumeRole: Sendable {
        public let roleArn: String
        public let sessionName: String
        public let externalID: String?
        public let durationSeconds: Int?
        public let source: CredentialSource
        public let sts: STSEndpoint
        /// The profile that names the role.
        public let profile: String
    }

    public struct Container: Sendable {
        public let url: String
        /// The `Authorization` header's value, or the file it is read from at each request.
        public let token: String?
        public let tokenFile: String?
    }

    public struct InstanceMetadata: Sendable {
        /// `http://169.254.169.254` unless `AWS_EC2_METADATA_SERVICE_ENDPOINT` says otherwise.
        public let endpoint: String
        /// Seconds to wait for each answer (`AWS_METADATA_SERVICE_TIMEOUT`; 1 by default).
        public let timeout: Double
    }

    /// What the source is, for messages: `web identity (role arn:…, token file /var/run/…)`.
    public var name: String {
        switch self {
        case .fixed(_, let origin): origin
        case .webIdentity(let identity): "web identity (role \(identity.roleArn), token file \(identity.tokenFile))"
        case .process(_, let profile): "credential_process of profile \(profile)"
        case .assumeRole(let role): "role \(role.roleArn) of profile \(role.profile), assumed with \(role.source.name)"
        case .container(let container): "container credentials (\(container.url))"
        case .instanceMetadata(let metadata): "instance metadata (\(metadata.endpoint))"
        }
    }
}
