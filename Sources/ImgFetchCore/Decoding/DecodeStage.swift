/// Checks fetched bodies on a pool of worker threads, never on the engine thread.
///
/// The pool's backlog is bounded by the engine's admission: a body counts against
/// `decodeBacklog` until its consumer releases it.
final class DecodeStage: Sendable {
    private let pool: WorkerPool

    init(threads: Int) {
        pool = WorkerPool(threads: threads, name: "imgfetch.decode")
    }

    /// Runs `job` on a worker thread.
    func run(_ job: @escaping @Sendable () -> Void) {
        pool.submit(job)
    }

    /// What a body is: its image format, or why it is rejected.
    func verify(_ body: FetchedBody) -> Result<ImageFormat, DownloadError> {
        switch ImageSniffer.sniff(body.head) {
        case .image(let format): .success(format)
        case .notAnImage(let description): .failure(DownloadError(.notAnImage, description))
        }
    }

    func close() {
        pool.close()
    }
}
