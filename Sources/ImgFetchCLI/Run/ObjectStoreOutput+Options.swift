import ImgFetchCore

extension ObjectStoreOutput {
    /// The store of `-o s3://…`, with the run's retries, timeouts and User-Agent; nil for a local output.
    init?(_ options: CommandLineOptions) {
        guard let location = options.objectStore, let access = options.objectStoreAccess else { return nil }
        let configuration = options.downloaderConfiguration(outputDirectory: options.outputDirectory)
        self.init(location: location, access: access, workDirectory: options.outputDirectory,
                  settings: S3Client.Settings(retry: RetryPolicy(maxRetries: options.retries), connectTimeout: options.connectTimeout,
                                              timeout: options.timeout, userAgent: configuration.userAgent,
                                              partSize: options.objectStorePartSize))
    }

    /// Stops the run before it starts (exit 2; a worker exits 75 when a later attempt may do
    /// better) when there are no keys, the bucket is missing or in another region, or the store
    /// refuses or fails a first write.
    func checkStart() throws(SetupError) {
        if let problem = startProblem() { throw SetupError(message: problem.message, isTemporary: problem.temporary) }
    }
}
