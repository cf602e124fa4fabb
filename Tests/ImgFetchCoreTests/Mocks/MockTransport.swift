import Foundation
import Synchronization
@testable import ImgFetchCore

/// A `DownloadTransport` whose transfers finish only when a test says so.
///
/// It plays the engine: `submit` creates the transfer's temp file (as `Engine.start` does),
/// `finish` writes a body into it and hands it on, `cancel` reports a `cancelled` failure unless
/// the transfer already finished. Every transfer's `onFinish` runs exactly once, on the thread
/// that finished or cancelled it, outside the lock. All state is guarded by `state` (an `NSLock`).
final class MockTransport: DownloadTransport {
    private struct State {
        var submitted: [Transfer] = []
        var cancelled: [Transfer] = []
        /// Transfers whose `onFinish` ran (or is about to run), by id.
        var finished: Set<Int> = []
        var releases = 0
        var closed = false
    }

    private let state = LockedState(State())

    // MARK: - DownloadTransport

    func submit(_ transfer: Transfer) {
        // Like the engine, a transfer gets its temp file when it starts; cancelling it removes the file.
        let tempFile = try? transfer.body.directory?.create()
        state.withLock { state in
            transfer.body.tempFile = tempFile
            transfer.attempts = 1
            state.submitted.append(transfer)
        }
    }

    func cancel(_ transfer: Transfer) {
        let claimed = state.withLock { state -> Bool in
            state.cancelled.append(transfer)
            guard claim(transfer, in: &state) else { return false }
            transfer.stage = .cancelled
            transfer.body.tempFile = nil
            return true
        }
        guard claimed else { return }
        transfer.onFinish(.failed(DownloadError(.cancelled, "cancelled"), attempts: transfer.attempts, httpStatus: nil))
    }

    func cancelAll() {
        for transfer in unfinished { cancel(transfer) }
    }

    func release() {
        state.withLock { $0.releases += 1 }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    // MARK: - What the test sees

    var submitted: [Transfer] { state.withLock { $0.submitted } }
    var cancelled: [Transfer] { state.withLock { $0.cancelled } }
    var releaseCount: Int { state.withLock { $0.releases } }
    var finishedCount: Int { state.withLock { $0.finished.count } }
    var isClosed: Bool { state.withLock { $0.closed } }

    /// True once `transfer` was finished, failed or cancelled (its `onFinish` ran or is running).
    func hasFinished(_ transfer: Transfer) -> Bool {
        state.withLock { $0.finished.contains(transfer.id) }
    }

    /// Submitted transfers whose `onFinish` has not run.
    var unfinished: [Transfer] {
        state.withLock { state in state.submitted.filter { !state.finished.contains($0.id) } }
    }

    /// The newest submitted transfer of `url` (compared by normalized URL), if any.
    func transfer(for url: ParsedURL) -> Transfer? {
        state.withLock { state in state.submitted.last { $0.url.normalized == url.normalized } }
    }

    /// Waits until at least `count` transfers were submitted; false on timeout.
    func waitForSubmissions(_ count: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while state.withLock({ $0.submitted.count }) < count {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Waits (without blocking a thread) for the `index`th submitted transfer; nil on timeout.
    func submission(_ index: Int, timeout: TimeInterval = 10) async -> Transfer? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let transfer = state.withLock({ $0.submitted.count > index ? $0.submitted[index] : nil }) { return transfer }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return nil
    }

    // MARK: - Driving transfers

    /// Completes `transfer` with a 2xx `body` in a temp file of its directory. Returns false when the
    /// transfer had already finished or been cancelled (nothing is delivered then).
    @discardableResult
    func finish(_ transfer: Transfer, body: Data, httpStatus: Int = 200) -> Bool {
        let claimed = state.withLock { state -> (TempFile?, Int)? in
            guard claim(transfer, in: &state) else { return nil }
            defer { transfer.body.tempFile = nil }
            return (transfer.body.tempFile, transfer.attempts)
        }
        guard let (existing, attempts) = claimed else { return false }
        let outcome: TransferOutcome
        do throws(DownloadError) {
            let tempFile: TempFile
            if let existing { tempFile = existing } else { tempFile = try transfer.body.directory!.create() }
            if let code = body.withUnsafeBytes({ tempFile.write($0) }) {
                throw DownloadError(.filesystem, "mock cannot write \(tempFile.displayPath): \(Errno.describe(code))")
            }
            tempFile.finishWriting()
            let now = Date().timeIntervalSince1970
            // Like the engine, the body is hashed when the request asks for it (an index is kept).
            var digests: [DigestAlgorithm: String] = [:]
            for algorithm in transfer.request.digests {
                digests[algorithm] = body.withUnsafeBytes { bytes in
                    let hasher = DigestHasher(algorithm)
                    hasher.update(bytes)
                    return hasher.finish()
                }
            }
            outcome = .fetched(ReceivedBody(tempFile: tempFile, bytes: Int64(body.count), head: Array(body.prefix(ImageSniffer.headLength)),
                                            digests: digests),
                               ResponseMetadata(status: httpStatus, httpVersion: nil, headers: [], requestTime: now, responseTime: now,
                                                attempts: attempts, finalURL: transfer.url.normalized))
        } catch {
            outcome = .failed(error, attempts: attempts, httpStatus: nil)
        }
        transfer.onFinish(outcome)
        return true
    }

    /// Fails `transfer` with `error`. Returns false when it had already finished or been cancelled.
    @discardableResult
    func fail(_ transfer: Transfer, _ error: DownloadError, httpStatus: Int? = nil) -> Bool {
        let attempts = state.withLock { state -> Int? in
            guard claim(transfer, in: &state) else { return nil }
            transfer.body.tempFile = nil
            return transfer.attempts
        }
        guard let attempts else { return false }
        transfer.onFinish(.failed(error, attempts: attempts, httpStatus: httpStatus))
        return true
    }

    /// Reports progress as the engine's write callback would (the transfer's throttle is bypassed).
    func progress(_ transfer: Transfer, received: Int64, expected: Int64?) {
        let handler = state.withLock { _ in transfer.progress.handler }
        guard transfer.progress.wanted.load(ordering: .relaxed) else { return }
        handler?(received, expected)
    }

    /// Finishes every unfinished transfer with `body`; returns how many it finished.
    @discardableResult
    func finishAll(body: Data) -> Int {
        var count = 0
        while true {
            let pending = unfinished
            if pending.isEmpty { return count }
            for transfer in pending where finish(transfer, body: body) { count += 1 }
        }
    }

    /// Marks `transfer` finished; false when it already was. Call with the lock held.
    private func claim(_ transfer: Transfer, in state: inout State) -> Bool {
        guard transfer.stage != .finished, transfer.stage != .cancelled else { return false }
        transfer.stage = .finished
        state.finished.insert(transfer.id)
        return true
    }

    // MARK: - Bodies

    /// A small body that sniffs as JPEG: the `FF D8 FF E0` magic, then `count` filler bytes from `seed`.
    static func jpegBody(count: Int = 200, seed: UInt8 = 0) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        bytes += (0..<count).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed) &* 31) }
        return Data(bytes)
    }

    /// A body that is not an image.
    static let htmlBody = Data("<html><body>not found</body></html>".utf8)
}
