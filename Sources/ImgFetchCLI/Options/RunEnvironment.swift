import ImgFetchCore

/// What a run takes from its environment rather than its command line, read after the options are
/// parsed: a cluster's shard (Kubernetes' `JOB_COMPLETION_INDEX`, Slurm's `SLURM_ARRAY_TASK_ID`,
/// with `IMGFETCH_SHARD_COUNT`) when no `--shard` is given, and, with `-o s3://…`, the object
/// store's credentials, region and endpoint (`AWS_*`) and part size (`IMGFETCH_S3_PART_SIZE`).
/// `--help`, `--version` and the other actions read nothing: they work in any environment.
public enum RunEnvironment {
    public static func apply(_ environment: [String: String], to options: inout CommandLineOptions) throws(UsageError) {
        guard options.action == .run else { return }
        if options.shard == nil { options.shard = try ShardSelector.fromEnvironment(environment) }
        options.shard?.key = options.shardBy
        if options.shardBy != .url && options.shard == nil {
            throw UsageError(option: "--shard-by", problem: .combination("needs --shard K/N, or a cluster's shard in the environment"))
        }
        try resolveObjectStore(&options, environment: environment)
        if options.addressPolicy.blockPrivate, let proxy = proxyVariable(environment) {
            throw UsageError(option: "--block-private", problem: .combination(
                "cannot see the addresses a proxy connects to, and \(proxy) is set: unset it (or set no_proxy='*'), "
                    + "or leave --block-private out and let the proxy refuse private addresses"))
        }
    }

    /// The proxy variable libcurl would use for image requests, if any (it reads `http_proxy` in
    /// lowercase only); none when `no_proxy` is `*`.
    static func proxyVariable(_ environment: [String: String]) -> String? {
        if environment["no_proxy"] == "*" || environment["NO_PROXY"] == "*" { return nil }
        return ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].first { !(environment[$0] ?? "").isEmpty }
    }

    /// `-o s3://…`: its credentials from the environment, and its local work directory.
    private static func resolveObjectStore(_ options: inout CommandLineOptions, environment: [String: String]) throws(UsageError) {
        guard let location = options.objectStore else { return }
        if options.galleryFile != nil {
            throw UsageError(option: "--gallery", problem: .combination("cannot be used with -o s3://…: the page links to local files"))
        }
        switch S3Access.fromEnvironment(environment) {
        case .success(let access): options.objectStoreAccess = access
        case .failure(let error): throw UsageError(option: "-o", problem: .combination("\(location): \(error.reason)"))
        }
        if let text = environment["IMGFETCH_S3_PART_SIZE"], !text.isEmpty {
            guard ValueParser.isDigits(text), let size = Int(text), (1 << 10...5 << 30).contains(size) else {
                throw UsageError(option: "-o", problem: .combination(
                    "IMGFETCH_S3_PART_SIZE '\(text)' is not a number of bytes from 1024 to 5 GiB (S3 takes 5 MiB at least)"))
            }
            options.objectStorePartSize = size
        }
        options.outputDirectory = options.workDirectory ?? ObjectStoreOutput.defaultWorkDirectory(for: location, environment: environment)
    }
}
