import Foundation
import XCTest

/// A real S3-compatible store on loopback (`Scripts/test-support/s3_store.py serve`: moto's server, checking
/// signatures unless `auth` is false, behind a proxy that logs and can fail requests), with one
/// bucket. `environment` is what imgfetch needs to reach it; `objects` reads it back with boto3.
final class S3TestStore {
    let endpoint: String
    /// moto itself, for reading back past the proxy.
    let store: String
    let accessKey: String
    let secretKey: String
    let bucket: String
    /// The fake container-credentials and IMDSv2 endpoint, and the role its keys (and STS's) are of.
    let credentialsEndpoint: String
    let roleArn: String
    private let directory: URL
    private let process: Process
    private let stdin: Pipe

    static var python: URL { TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python") }
    static var script: String { TestServer.packageRoot.appendingPathComponent("Scripts/test-support/s3_store.py").path }

    /// With `tls`, the endpoint is https, with `certificate` (which doubles as its CA file). `others`
    /// are more buckets, each `NAME` or `NAME@REGION`.
    /// `keysExpireAfter`: the store refuses the credential endpoint's keys this many seconds after it handed them out.
    init(bucket: String = "pics", others: [String] = [], auth: Bool = true, tls certificate: SelfSignedCertificate? = nil,
         keysExpireAfter: Double = 3600) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else {
            throw XCTSkip("no venv at \(Self.python.path): run Scripts/install-deps")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imgfetch-s3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = Self.python
        var arguments = [Self.script, "serve", "--bucket", bucket, "--log", directory.appendingPathComponent("log.jsonl").path,
                         "--faults", directory.appendingPathComponent("faults.json").path, "--keys-expire-after", String(keysExpireAfter)]
        if !auth { arguments.append("--no-auth") }
        for other in others { arguments += ["--also", other] }
        if let certificate { arguments += ["--tls-cert", certificate.certificateFile, "--tls-key", certificate.keyFile] }
        process.arguments = arguments
        stdin = Pipe()
        let output = Pipe()
        process.standardInput = stdin
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            line.append(first)
        }
        guard let info = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: String],
              let endpoint = info["endpoint"], let store = info["store"], let access = info["access_key"], let secret = info["secret_key"],
              let credentialsEndpoint = info["credentials_endpoint"], let roleArn = info["role_arn"] else {
            process.terminate()
            throw TestServerError.didNotStart(String(decoding: line, as: UTF8.self))
        }
        self.endpoint = endpoint
        self.store = store
        accessKey = access
        secretKey = secret
        self.bucket = bucket
        self.credentialsEndpoint = credentialsEndpoint
        self.roleArn = roleArn
    }

    /// The proxy's log of requests, a JSON line each.
    var logPath: String { directory.appendingPathComponent("log.jsonl").path }

    /// What imgfetch reads to reach the store (and nothing of the test's own environment).
    var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey, "AWS_ENDPOINT_URL": endpoint,
         "AWS_REGION": "us-east-1", "PATH": "/usr/bin:/bin"].merging(Self.noSharedFiles) { $1 }
    }

    /// Shared AWS files that do not exist: the user's own `~/.aws` plays no part in a test.
    static let noSharedFiles = ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/.aws/credentials", "AWS_CONFIG_FILE": "/nonexistent/.aws/config"]

    /// Delays the requests of `method` whose key ends with `suffix` by `delay` seconds each, then passes them on.
    func delayRequests(method: String, suffix: String, delay: Double) throws {
        let rule: [String: Any] = ["method": method, "suffix": suffix, "times": -1, "delay": delay, "pass": true]
        try JSONSerialization.data(withJSONObject: ["rules": [rule]]).write(to: directory.appendingPathComponent("faults.json"))
    }

    /// Fails the first `times` requests of `method` whose key ends with `suffix` (-1: all) with
    /// `status`; with `query`, only requests whose query string holds it.
    func failRequests(_ rules: [(method: String, suffix: String, times: Int)], status: Int = 503, query: String = "") throws {
        let json: [String: Any] = ["status": status,
                                   "rules": rules.map { ["method": $0.method, "suffix": $0.suffix, "times": $0.times, "query": query] }]
        try JSONSerialization.data(withJSONObject: json).write(to: directory.appendingPathComponent("faults.json"))
    }

    /// Answers the first `times` requests of `method` whose key ends with `suffix` and whose query
    /// holds `query` with `status`, `body` and `headers` instead of passing them on.
    func answerRequests(method: String, suffix: String, query: String = "", times: Int, status: Int, body: String? = nil,
                        headers: [String: String] = [:], delay: Double = 0) throws {
        var rule: [String: Any] = ["method": method, "suffix": suffix, "query": query, "times": times, "status": status,
                                   "headers": headers, "delay": delay]
        if let body { rule["body"] = body }
        try JSONSerialization.data(withJSONObject: ["rules": [rule]]).write(to: directory.appendingPathComponent("faults.json"))
    }

    func clearFaults() {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("faults.json"))
    }

    struct Request: Decodable, Equatable {
        let method: String
        let key: String
        let status: Int
        /// The query string as sent (`partNumber=2&uploadId=…`), empty for none.
        var query = ""
        /// The access key the request was signed with; empty for an unsigned one.
        var signer = ""
        /// The host it was sent to, without the port: `127.0.0.1`, or `BUCKET.s3.localhost` in virtual-hosted style.
        var host = ""

        var isWriteCheck: Bool { key == ".imgfetch-write-check" || key.hasSuffix("/.imgfetch-write-check") }

        enum CodingKeys: String, CodingKey {
            case method, key, status, query, signer, host
        }

        init(method: String, key: String, status: Int) {
            self.method = method
            self.key = key
            self.status = status
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            method = try container.decode(String.self, forKey: .method)
            key = try container.decode(String.self, forKey: .key)
            status = try container.decode(Int.self, forKey: .status)
            query = try container.decodeIfPresent(String.self, forKey: .query) ?? ""
            signer = try container.decodeIfPresent(String.self, forKey: .signer) ?? ""
            host = try container.decodeIfPresent(String.self, forKey: .host) ?? ""
        }
    }

    /// Every request the store was sent so far, in the order they were answered; the write check
    /// each run makes first (a PUT and DELETE of `PREFIX/.imgfetch-write-check`) only when asked.
    func requests(withWriteChecks: Bool = false) throws -> [Request] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("log.jsonl")) else { return [] }
        let all = try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Request.self, from: Data($0)) }
        return withWriteChecks ? all : all.filter { !$0.isWriteCheck }
    }

    struct Object: Decodable, Equatable {
        let key: String
        let size: Int
        let sha256: String
        let contentType: String?
        let etag: String?
        /// The object's user metadata (`x-amz-meta-NAME`), by name.
        let metadata: [String: String]

        enum CodingKeys: String, CodingKey {
            case key, size, sha256, etag, metadata
            case contentType = "content_type"
        }
    }

    struct Upload: Decodable, Equatable {
        let key: String
        let uploadID: String

        enum CodingKeys: String, CodingKey {
            case key
            case uploadID = "upload_id"
        }
    }

    /// The multipart uploads in progress under `prefix`, listed with boto3.
    func incompleteUploads(prefix: String = "") throws -> [Upload] {
        try tool(["uploads", "--prefix", prefix]).stdout.split(separator: "\n").map { try JSONDecoder().decode(Upload.self, from: Data($0.utf8)) }
    }

    /// Starts a multipart upload of `key` with boto3, puts one part and leaves it in progress (another program's).
    func startUpload(_ key: String) throws -> Upload {
        try JSONDecoder().decode(Upload.self, from: Data(try tool(["start-upload", "--key", key]).stdout.utf8))
    }

    /// The objects under `prefix` (in `bucket`, by default the store's first), read back with boto3, by key.
    func objects(prefix: String = "", in bucket: String? = nil) throws -> [String: Object] {
        let run = try tool(["list", "--prefix", prefix], bucket: bucket)
        let objects = try run.stdout.split(separator: "\n").map { try JSONDecoder().decode(Object.self, from: Data($0.utf8)) }
        return Dictionary(uniqueKeysWithValues: objects.map { ($0.key, $0) })
    }

    /// Object `key`'s bytes, read with boto3.
    func data(_ key: String) throws -> Data {
        let file = directory.appendingPathComponent("get-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try tool(["get", "--key", key, "--out", file.path])
        return try Data(contentsOf: file)
    }

    /// Replaces object `key` with `data`, written with boto3.
    func put(_ key: String, _ data: Data) throws {
        let file = directory.appendingPathComponent("put-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try data.write(to: file)
        _ = try tool(["put", "--key", key, "--file", file.path])
    }

    func delete(_ key: String) throws {
        _ = try tool(["delete", "--key", key])
    }

    private func tool(_ arguments: [String], bucket: String? = nil) throws -> Execution {
        let run = try ImgFetchRunner.run([Self.script] + arguments + ["--store", store, "--bucket", bucket ?? self.bucket],
                                         environment: ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey],
                                         executable: Self.python)
        guard run.exitCode == 0 else { throw TestServerError.didNotStart("s3_store.py \(arguments.first ?? ""): \(run.stderr)") }
        return run
    }

    /// Kills the store (moto and its proxy, one process) with SIGKILL: a store that dies mid-run.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        if process.isRunning {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
