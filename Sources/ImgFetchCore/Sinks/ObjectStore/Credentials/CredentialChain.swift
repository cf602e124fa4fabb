import Glibc

/// The standard AWS credential chain, in the order the AWS SDKs document: the first source that
/// is configured gives the run's keys, and one that is configured but fails is an error rather
/// than a reason to look further.
///
/// 1. `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`);
/// 2. web identity: `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN` (`AWS_ROLE_SESSION_NAME`);
/// 3. the profile (`AWS_PROFILE`, else `default`) of the shared files: `role_arn` with
///    `web_identity_token_file`, `source_profile` or `credential_source`; then
///    `aws_access_key_id` and `aws_secret_access_key`; then `credential_process`;
/// 4. container credentials: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`, with
///    `AWS_CONTAINER_AUTHORIZATION_TOKEN` or `_TOKEN_FILE`;
/// 5. EC2 instance metadata (IMDSv2), unless `AWS_EC2_METADATA_DISABLED=true`.
///
/// Choosing reads only the environment and the files; nothing is fetched until the provider is
/// first asked (`CredentialProvider`). `tried` names every source looked at, for the one-line
/// error when none gives keys.
public struct CredentialChain: Sendable {
    /// The source chosen; nil: none is configured, and instance metadata is disabled.
    public let source: CredentialSource?
    /// The sources looked at before the chosen one, each with why it did not apply.
    public let tried: [String]

    public struct Failure: Error, Sendable {
        public let reason: String
    }

    /// The link-local addresses of AWS's container and instance-metadata endpoints.
    static let ecsHost = "http://169.254.170.2"
    static let instanceMetadataEndpoint = "http://169.254.169.254"

    /// The chain `environment` and `files` configure; `region` is the run's, for STS.
    public static func choose(_ environment: [String: String], files: AWSConfigFiles, region: String) throws(Failure) -> CredentialChain {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        var tried: [String] = []
        // 1. The environment's keys.
        if let access = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
            return CredentialChain(source: .fixed(AWSCredentials(accessKey: access, secretKey: secret, sessionToken: value("AWS_SESSION_TOKEN")),
                                                  origin: "the environment (AWS_ACCESS_KEY_ID)"), tried: tried)
        }
        if value("AWS_ACCESS_KEY_ID") != nil || value("AWS_SECRET_ACCESS_KEY") != nil {
            throw Failure(reason: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
        }
        tried.append("environment (no AWS_ACCESS_KEY_ID)")
        let sts = try stsEndpoint(environment, region: region)
        let sessionName = value("AWS_ROLE_SESSION_NAME") ?? "imgfetch-\(time(nil))"
        // 2. Web identity from the environment.
        if let tokenFile = value("AWS_WEB_IDENTITY_TOKEN_FILE"), let role = value("AWS_ROLE_ARN") {
            return CredentialChain(source: .webIdentity(.init(tokenFile: tokenFile, roleArn: role, sessionName: sessionName, sts: sts)),
                                   tried: tried)
        }
        if value("AWS_WEB_IDENTITY_TOKEN_FILE") != nil || value("AWS_ROLE_ARN") != nil {
            throw Failure(reason: "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together")
        }
        tried.append("web identity (no AWS_WEB_IDENTITY_TOKEN_FILE)")
        // 3. The shared files' profile.
        let profileName = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        let name = profileName ?? "default"
        let filesNamed = "\(files.credentialsPath) and \(files.configPath)"
        if let profile = files.profile(name) {
            if let source = try profileSource(name, profile, files: files, environment: environment, sts: sts,
                                              sessionName: sessionName, visited: []) {
                return CredentialChain(source: source, tried: tried)
            }
            tried.append("profile \(name) (no keys, role or credential_process in \(filesNamed))")
        } else if profileName != nil {
            throw Failure(reason: "profile \(name) (AWS_PROFILE) is in neither \(filesNamed)")
        } else {
            tried.append("shared files (no profile default in \(filesNamed))")
        }
        // 4. A container's endpoint.
        if let container = try containerSource(environment) {
            return CredentialChain(source: .container(container), tried: tried)
        }
        tried.append("container (no AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI)")
        // 5. Instance metadata.
        if value("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" {
            tried.append("instance metadata (AWS_EC2_METADATA_DISABLED=true)")
            return CredentialChain(source: nil, tried: tried)
        }
        var endpoint = value("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?? instanceMetadataEndpoint
        try checkURL(endpoint, variable: "AWS_EC2_METADATA_SERVICE_ENDPOINT")
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        var timeout = 1.0
        if let text = value("AWS_METADATA_SERVICE_TIMEOUT") {
            guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
                throw Failure(reason: "AWS_METADATA_SERVICE_TIMEOUT '\(text)' is not a number of seconds from 0 to 60")
            }
            timeout = seconds
        }
        return CredentialChain(source: .instanceMetadata(.init(endpoint: endpoint, timeout: timeout)), tried: tried)
    }

    /// What profile `name` gives keys from, or nil when it holds none of the settings that do.
    private static func profileSource(_ name: String, _ profile: [String: String], files: AWSConfigFiles,
                                      environment: [String: String], sts: CredentialSource.STSEndpoint, sessionName: String,
                                      visited: [String]) throws(Failure) -> CredentialSource? {
        func setting(_ key: String) -> String? { profile[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let role = setting("role_arn") {
            let session = setting("role_session_name") ?? sessionName
            if let tokenFile = setting("web_identity_token_file") {
                return .webIdentity(.init(tokenFile: tokenFile, roleArn: role, sessionName: session, sts: sts))
            }
            let source: CredentialSource
            switch (setting("source_profile"), setting("credential_source")) {
            case (let sourceName?, nil):
                guard !visited.contains(sourceName), visited.count < 8 else {
                    throw Failure(reason: "profile \(name): source_profile \(sourceName) loops back (\((visited + [name, sourceName]).joined(separator: " → ")))")
                }
                guard let sourceProfile = files.profile(sourceName) else {
                    throw Failure(reason: "profile \(name): its source_profile \(sourceName) is in neither \(files.credentialsPath) nor \(files.configPath)")
                }
                // A profile that is its own source signs with its own keys, as the AWS SDKs do.
                if sourceName == name || sourceProfile["role_arn"] == nil {
                    guard let keys = staticKeys(sourceProfile) else {
                        throw Failure(reason: "profile \(name): its source_profile \(sourceName) has no aws_access_key_id and aws_secret_access_key")
                    }
                    source = .fixed(keys, origin: "profile \(sourceName)")
                } else {
                    guard let inner = try profileSource(sourceName, sourceProfile, files: files, environment: environment, sts: sts,
                                                        sessionName: sessionName, visited: visited + [name]) else {
                        throw Failure(reason: "profile \(name): its source_profile \(sourceName) gives no keys")
                    }
                    source = inner
                }
            case (nil, let credentialSource?):
                switch credentialSource {
                case "Environment":
                    guard let access = environment["AWS_ACCESS_KEY_ID"], let secret = environment["AWS_SECRET_ACCESS_KEY"],
                          !access.isEmpty, !secret.isEmpty else {
                        throw Failure(reason: "profile \(name): credential_source Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
                    }
                    source = .fixed(AWSCredentials(accessKey: access, secretKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"]),
                                    origin: "the environment (AWS_ACCESS_KEY_ID)")
                case "EcsContainer":
                    guard let container = try containerSource(environment) else {
                        throw Failure(reason: "profile \(name): credential_source EcsContainer, but AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is not set")
                    }
                    source = .container(container)
                case "Ec2InstanceMetadata":
                    let endpoint = environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? instanceMetadataEndpoint
                    try checkURL(endpoint, variable: "AWS_EC2_METADATA_SERVICE_ENDPOINT")
                    source = .instanceMetadata(.init(endpoint: endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint, timeout: 1))
                default:
                    throw Failure(reason: "profile \(name): credential_source '\(credentialSource)' is not Environment, EcsContainer or Ec2InstanceMetadata")
                }
            case (nil, nil):
                throw Failure(reason: "profile \(name): role_arn needs source_profile, credential_source or web_identity_token_file")
            case (_?, _?):
                throw Failure(reason: "profile \(name): source_profile and credential_source cannot both be set")
            }
            var duration: Int?
            if let text = setting("duration_seconds") {
                guard let seconds = Int(text), (900...43_200).contains(seconds) else {
                    throw Failure(reason: "profile \(name): duration_seconds '\(text)' is not from 900 to 43200")
                }
                duration = seconds
            }
            return .assumeRole(.init(roleArn: role, sessionName: session, externalID: setting("external_id"), durationSeconds: duration,
                                     source: source, sts: sts, profile: name))
        }
        if let keys = staticKeys(profile) { return .fixed(keys, origin: "profile \(name) of \(files.credentialsPath) or \(files.configPath)") }
        if profile["aws_access_key_id"] != nil || profile["aws_secret_access_key"] != nil {
            throw Failure(reason: "profile \(name): aws_access_key_id and aws_secret_access_key must be set together")
        }
        if let command = setting("credential_process") { return .process(command: command, profile: name) }
        return nil
    }

    private static func staticKeys(_ profile: [String: String]) -> AWSCredentials? {
        guard let access = profile["aws_access_key_id"], let secret = profile["aws_secret_access_key"], !access.isEmpty, !secret.isEmpty else {
            return nil
        }
        return AWSCredentials(accessKey: access, secretKey: secret, sessionToken: profile["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The container endpoint the environment names, or nil. A full URI over http must be a
    /// loopback address or one of AWS's own container endpoints, as the AWS SDKs require: the
    /// keys must not go to another host in the clear.
    private static func containerSource(_ environment: [String: String]) throws(Failure) -> CredentialSource.Container? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let url: String
        if let relative = value("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            guard relative.hasPrefix("/") else {
                throw Failure(reason: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI '\(relative)' does not start with /")
            }
            url = ecsHost + relative
        } else if let full = value("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            try checkURL(full, variable: "AWS_CONTAINER_CREDENTIALS_FULL_URI")
            if full.hasPrefix("http://"), let parsed = try? ParsedURL(full) {
                let host = parsed.host.lowercased()
                let allowed = host == "localhost" || host.hasPrefix("127.") || host == "[::1]" || host == "::1"
                    || host == "169.254.170.2" || host == "169.254.170.23" || host == "[fd00:ec2::23]" || host == "fd00:ec2::23"
                guard allowed else {
                    throw Failure(reason: "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(full)': over http, only a loopback address or AWS's container endpoint")
                }
            }
            url = full
        } else {
            return nil
        }
        return .init(url: url, token: value("AWS_CONTAINER_AUTHORIZATION_TOKEN"), tokenFile: value("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
    }

    /// STS's endpoint: `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`, else the region's.
    private static func stsEndpoint(_ environment: [String: String], region: String) throws(Failure) -> CredentialSource.STSEndpoint {
        for variable in ["AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"] {
            guard var url = environment[variable], !url.isEmpty else { continue }
            try checkURL(url, variable: variable)
            while url.hasSuffix("/") { url.removeLast() }
            return .init(url: url, region: region)
        }
        return .init(url: "https://sts.\(region).amazonaws.com", region: region)
    }

    private static func checkURL(_ url: String, variable: String) throws(Failure) {
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              (try? ParsedURL(url)) != nil else {
            throw Failure(reason: "\(variable) '\(url)' is not an http:// or https:// URL")
        }
    }
}
