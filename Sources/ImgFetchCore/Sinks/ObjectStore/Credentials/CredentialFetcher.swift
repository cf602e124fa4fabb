import CCurl

/// Asks a `CredentialSource` for keys. Its HTTP requests (STS, a container's endpoint, instance
/// metadata) are store exchanges on an engine, beside the run's transfers, with short timeouts:
/// STS's are signed with SigV4 by libcurl where the action needs it, and only STS's XML reply
/// and the endpoints' JSON are read.
struct CredentialFetcher {
    let transport: StoreTransport
    let stop: CancelSignal
    let userAgent: String
    /// The CA bundle for STS over https (`AWS_CA_BUNDLE`); nil: the system's.
    let caBundle: String?

    /// STS's API version, sent with each action.
    static let stsVersion = "2011-06-15"

    func fetch(_ source: CredentialSource) throws(DownloadError) -> AWSCredentials {
        let credentials: AWSCredentials
        switch source {
        case .fixed(let fixed, _):
            credentials = fixed
        case .webIdentity(let identity):
            let token: String
            switch FileDescriptorIO.readSmallFile(identity.tokenFile, limit: 64 << 10) {
            case .success(let bytes)?: token = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
            case .failure(let failure)?: throw DownloadError(.storage, "web identity: \(failure.reason)")
            case nil: throw DownloadError(.storage, "web identity: the token file \(identity.tokenFile) does not exist (AWS_WEB_IDENTITY_TOKEN_FILE)")
            }
            credentials = try sts("AssumeRoleWithWebIdentity", [("RoleArn", identity.roleArn), ("RoleSessionName", identity.sessionName),
                                                              ("WebIdentityToken", token)],
                                  at: identity.sts, signedWith: nil, role: identity.roleArn)
        case .assumeRole(let role):
            let sourceKeys = try fetch(role.source)
            var parameters = [("RoleArn", role.roleArn), ("RoleSessionName", role.sessionName)]
            if let id = role.externalID { parameters.append(("ExternalId", id)) }
            if let seconds = role.durationSeconds { parameters.append(("DurationSeconds", String(seconds))) }
            credentials = try sts("AssumeRole", parameters, at: role.sts, signedWith: sourceKeys, role: role.roleArn)
        case .process(let command, let profile):
            credentials = try runProcess(command, profile: profile)
        case .container(let container):
            credentials = try fromContainer(container)
        case .instanceMetadata(let metadata):
            credentials = try fromInstanceMetadata(metadata)
        }
        if let problem = credentials.problem { throw DownloadError(.storage, "\(source.name) gave unusable keys: \(problem)") }
        return credentials
    }

    // MARK: - STS

    private func sts(_ action: String, _ parameters: [(String, String)], at endpoint: CredentialSource.STSEndpoint,
                     signedWith keys: AWSCredentials?, role: String) throws(DownloadError) -> AWSCredentials {
        let form = ([("Action", action), ("Version", Self.stsVersion)] + parameters)
            .map { "\($0.0)=\(S3Access.encodeQueryValue($0.1))" }.joined(separator: "&")
        var headers = ["Content-Type: application/x-www-form-urlencoded; charset=utf-8"]
        var signing: StoreExchange.Signing?
        if let keys {
            headers.append("x-amz-content-sha256: \(SHA256.hexDigest(form))")
            if let token = keys.sessionToken { headers.append("x-amz-security-token: \(token)") }
            signing = StoreExchange.Signing(scope: "aws:amz:\(endpoint.region):sts", accessKey: keys.accessKey, secretKey: keys.secretKey)
        }
        let what = "STS \(action) for \(role) at \(endpoint.url)"
        let answer = try send(.post, url: endpoint.url + "/", headers: headers, body: Array(form.utf8), signing: signing,
                              connectTimeout: 5, timeout: 10, retrying: true, what: what)
        guard answer.status == 200 else {
            throw DownloadError(.storage, "\(what): HTTP \(answer.status)\(XMLText.errorText(answer.body))")
        }
        let body = answer.body
        guard let access = XMLText.element("AccessKeyId", in: body, limit: 4096),
              let secret = XMLText.element("SecretAccessKey", in: body, limit: 4096) else {
            throw DownloadError(.storage, "\(what): the answer has no Credentials")
        }
        let expiration = XMLText.element("Expiration", in: body).flatMap(ISO8601Date.parse)
        return AWSCredentials(accessKey: XMLText.unescaped(access), secretKey: XMLText.unescaped(secret),
                              sessionToken: XMLText.element("SessionToken", in: body, limit: 64 << 10).map(XMLText.unescaped),
                              expiration: expiration)
    }

    // MARK: - Endpoints that answer JSON

    private func fromContainer(_ container: CredentialSource.Container) throws(DownloadError) -> AWSCredentials {
        var headers: [String] = []
        if let file = container.tokenFile {
            switch FileDescriptorIO.readSmallFile(file, limit: 16 << 10) {
            case .success(let bytes)?: headers.append("Authorization: " + String(decoding: bytes, as: UTF8.self).trimmingWhitespace)
            case .failure(let failure)?: throw DownloadError(.storage, "container credentials: \(failure.reason)")
            case nil: throw DownloadError(.storage, "container credentials: \(file) does not exist (AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)")
            }
        } else if let token = container.token {
            headers.append("Authorization: \(token)")
        }
        if headers.contains(where: { $0.utf8.contains { $0 < 0x20 || $0 == 0x7F } }) {
            throw DownloadError(.storage, "container credentials: the authorization token has a control character")
        }
        let what = "container credentials at \(container.url)"
        let answer = try send(.get, url: container.url, headers: headers, connectTimeout: 2, timeout: 2, retrying: true, what: what)
        guard answer.status == 200 else { throw DownloadError(.storage, "\(what): HTTP \(answer.status)\(Self.jsonMessage(answer.body))") }
        return try Self.keys(fromJSON: answer.body, tokenField: "Token", what: what)
    }

    private func fromInstanceMetadata(_ metadata: CredentialSource.InstanceMetadata) throws(DownloadError) -> AWSCredentials {
        let what = "instance metadata at \(metadata.endpoint)"
        let tokenAnswer = try send(.put, url: metadata.endpoint + "/latest/api/token",
                                   headers: ["X-aws-ec2-metadata-token-ttl-seconds: 21600"],
                                   connectTimeout: metadata.timeout, timeout: metadata.timeout, retrying: false, what: what)
        guard tokenAnswer.status == 200, !tokenAnswer.body.isEmpty else {
            throw DownloadError(.storage, "\(what): HTTP \(tokenAnswer.status) to the token request (IMDSv2)")
        }
        let token = "X-aws-ec2-metadata-token: " + String(decoding: tokenAnswer.body, as: UTF8.self).trimmingWhitespace
        let base = metadata.endpoint + "/latest/meta-data/iam/security-credentials/"
        let roles = try send(.get, url: base, headers: [token], connectTimeout: metadata.timeout, timeout: metadata.timeout,
                             retrying: false, what: what)
        guard roles.status == 200,
              let role = String(decoding: roles.body, as: UTF8.self).split(separator: "\n").first.map({ $0.trimmingWhitespace }),
              !role.isEmpty, !role.contains("/"), !role.contains("?"), !role.contains("#") else {
            throw DownloadError(.storage, "\(what): the instance has no IAM role (HTTP \(roles.status))")
        }
        let answer = try send(.get, url: base + S3Access.encodeQueryValue(role), headers: [token], connectTimeout: metadata.timeout,
                              timeout: metadata.timeout, retrying: false, what: what)
        guard answer.status == 200 else { throw DownloadError(.storage, "\(what): HTTP \(answer.status) for role \(role)") }
        if let members = try? JSONObjectScanner.members(of: answer.body),
           let code = members.first(where: { $0.key == "Code" }).flatMap({ JSONObjectScanner.string($0.value) }), code != "Success" {
            throw DownloadError(.storage, "\(what): role \(role) answered Code \(code)")
        }
        return try Self.keys(fromJSON: answer.body, tokenField: "Token", what: what)
    }

    // MARK: - credential_process

    private func runProcess(_ command: String, profile: String) throws(DownloadError) -> AWSCredentials {
        let what = "credential_process of profile \(profile)"
        guard let words = CredentialProcess.words(command), !words.isEmpty else {
            throw DownloadError(.storage, "\(what): '\(command)' has an unclosed quote")
        }
        let output: CredentialProcess.Output
        switch CredentialProcess.run(words) {
        case .success(let done): output = done
        case .failure(let error): throw DownloadError(.storage, "\(what): \(error.message)")
        }
        guard output.status == 0 else {
            let said = String(decoding: output.stderr, as: UTF8.self).split(separator: "\n").last.map { ": " + $0.trimmingWhitespace } ?? ""
            throw DownloadError(.storage, "\(what): \(words[0]) exited with status \(output.status)\(said)")
        }
        let members = (try? JSONObjectScanner.members(of: output.stdout)) ?? []
        let version = members.first { $0.key == "Version" }?.value
        guard version == "1" else {
            throw DownloadError(.storage, "\(what): its output is not JSON with \"Version\": 1")
        }
        return try Self.keys(fromJSON: output.stdout, tokenField: "SessionToken", what: what)
    }

    // MARK: - Helpers

    /// The keys of a JSON answer: `AccessKeyId`, `SecretAccessKey`, the token field and `Expiration`.
    static func keys(fromJSON body: [UInt8], tokenField: String, what: String) throws(DownloadError) -> AWSCredentials {
        guard let members = try? JSONObjectScanner.members(of: body) else {
            throw DownloadError(.storage, "\(what): the answer is not a JSON object")
        }
        func field(_ name: String) -> String? {
            members.first { $0.key == name }.flatMap { JSONObjectScanner.string($0.value) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let access = field("AccessKeyId"), let secret = field("SecretAccessKey") else {
            throw DownloadError(.storage, "\(what): the answer has no AccessKeyId and SecretAccessKey")
        }
        var expiration: Double?
        if let text = field("Expiration") {
            guard let parsed = ISO8601Date.parse(text) else {
                throw DownloadError(.storage, "\(what): Expiration '\(text)' is not an ISO 8601 time")
            }
            expiration = parsed
        }
        return AWSCredentials(accessKey: access, secretKey: secret, sessionToken: field(tokenField), expiration: expiration)
    }

    /// `: MESSAGE` from a JSON error body's `message` or `Message`, or nothing.
    private static func jsonMessage(_ body: [UInt8]) -> String {
        guard let members = try? JSONObjectScanner.members(of: body) else { return "" }
        let message = members.first { $0.key.lowercased() == "message" }.flatMap { JSONObjectScanner.string($0.value) }
        return message.map { ": " + String($0.prefix(300)) } ?? ""
    }

    /// One exchange: its answer whatever the status (the caller reads it); a failure to connect
    /// or a timeout is retried with `retrying`, as are 429 and 5xx answers.
    private func send(_ method: StoreExchange.Method, url: String, headers: [String], body: [UInt8] = [],
                      signing: StoreExchange.Signing? = nil, connectTimeout: Double, timeout: Double, retrying: Bool,
                      what: String) throws(DownloadError) -> StoreAnswer {
        var exchange = StoreExchange(method: method, url: url, headers: headers, signing: signing, caBundle: caBundle,
                                     connectTimeout: connectTimeout, timeout: timeout, userAgent: userAgent,
                                     responseLimit: 64 << 10) { attempt in
            guard attempt.code == CURLE_OK else {
                let error = DownloadError(.storage, "\(what): \(attempt.detail)")
                return retrying && RetryPolicy.isTransient(curlCode: attempt.code) ? .retry(error) : .failed(error)
            }
            if attempt.overflowed { return .failed(DownloadError(.storage, "\(what): the answer is larger than 64 KiB")) }
            let status = attempt.answer.status
            if retrying, RetryPolicy.isTransient(status: status) {
                return .retry(DownloadError(.storage, "\(what): HTTP \(status)"))
            }
            return .answered
        }
        if !body.isEmpty || method == .post || method == .put { exchange.body = .bytes(body) }
        do {
            return try transport.run(exchange, stop: stop)
        } catch where error.kind == .cancelled {
            throw DownloadError(.cancelled, "cancelled while asking \(what)")
        }
    }
}
