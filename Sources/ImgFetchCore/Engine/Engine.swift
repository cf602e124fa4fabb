import CCurl
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Runs every transfer on libcurl's multi interface from one dedicated thread.
///
/// The engine thread owns the `CURLM`, every easy handle, the share handle and the schedulers; it
/// loops top-up → wait for ready sockets or libcurl's timer (`SocketEvents`) →
/// `curl_multi_socket_action` for each → drain `curl_multi_info_read`. Other threads only touch
/// `inbox` (a `Mutex`) and `unreleased` (an `Atomic`), then call `events.wake()`, which is
/// thread-safe. Hence `@unchecked Sendable`.
final class Engine: @unchecked Sendable {
    let configuration: DownloaderConfiguration
    private let multi: OpaquePointer
    private let inbox = Mutex(Inbox())
    /// Outcomes handed on whose consumer has not called `release()` yet: the decode backlog.
    private let unreleased = Atomic<Int>(0)
    /// Set by `cancelAll`: no download starts afterwards, and one submitted later is cancelled at
    /// once. Checked at every top-up, so none starts between `cancelAll` and the loop's next turn.
    private let refusing = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let events: SocketEvents
    /// Bodies held in memory by every transfer and the decode backlog together.
    private let heldBodyBudget = HeldBodyBudget(limit: HeldBodyBudget.defaultLimit)

    /// Streams libcurl runs at most on one HTTP/2 connection (its default, set explicitly; the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS lowers it).
    static let streamsPerConnection = 100

    // Engine thread only.
    /// Two lines: the downloads, held back while the decode backlog is full, and the store
    /// exchanges, which need no decoding and so never wait for it (an upload must not wait for
    /// the decoders, nor behind thousands of pending downloads). Each has its hosts' limits and
    /// gates; the store's have no breaker and no rate (`DownloaderConfiguration.storePolicy`).
    /// `cancelAll` and `refusing` are the downloads' (Ctrl-C, a full disk): a store exchange ends
    /// only by its client's stop (`CancelSignal`), so a full disk does not cancel the uploads
    /// that free it.
    private var scheduler: TransferScheduler
    private var storeScheduler: TransferScheduler
    private let options: EasyHandleOptions
    private var idleHandles: [OpaquePointer] = []
    /// Handles of store exchanges, set up afresh for each (`EasyHandleOptions.configureStore`).
    private var idleStoreHandles: [OpaquePointer] = []
    private var running: [Int: OpaquePointer] = [:]
    /// Transfers waiting to retry that keep a cut-off body to resume (each holds its temp file).
    private var resumesWaiting: Set<Int> = []
    private let protocolLog = HostProtocolLog()
    /// Ids of store exchanges, counted down from -1 (transfers of downloads count up from 1).
    private let storeIDs = Atomic<Int>(0)

    private struct Inbox {
        var submitted: [Transfer] = []
        var cancelled: [Transfer] = []
        var cancelEverything = false
        var closing = false
        /// Set by the engine thread as it leaves its loop: nothing submitted later would run.
        var stopped = false
    }

    init(configuration: DownloaderConfiguration) throws(DownloadError) {
        guard let multi = curl_multi_init() else { throw DownloadError(.network, "cannot initialize libcurl") }
        self.configuration = configuration
        self.multi = multi
        events = try SocketEvents()
        events.attach(to: multi)
        scheduler = TransferScheduler(order: configuration.order, perHost: configuration.perHost,
                                      streamsPerConnection: Self.streamsPerConnection, hostPolicy: configuration.hostPolicy)
        storeScheduler = TransferScheduler(order: .fifo, perHost: configuration.perHost,
                                           streamsPerConnection: Self.streamsPerConnection, hostPolicy: configuration.storePolicy)
        CCurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.concurrency)
        CCurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.perHost)
        CCurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        CCurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, Self.streamsPerConnection)
        options = try EasyHandleOptions(configuration: configuration)
        startThread(name: "imgfetch.engine") { [self] in run() }
    }

    /// Hands `transfer` to the engine thread; it starts when the scheduler admits it.
    func submit(_ transfer: Transfer) {
        let wasEmpty = inbox.withLock { box in
            box.submitted.append(transfer)
            return box.submitted.count == 1
        }
        // A non-empty inbox already has a wakeup on its way: one per batch, not one per URL.
        if wasEmpty { events.wake() }
    }

    /// Cancels a transfer wherever it is; its outcome is a `cancelled` failure.
    func cancel(_ transfer: Transfer) {
        inbox.withLock { $0.cancelled.append(transfer) }
        events.wake()
    }

    /// Cancels every transfer, running or pending; each one's outcome is a `cancelled` failure.
    func cancelAll() {
        refusing.store(true, ordering: .relaxed)
        inbox.withLock { $0.cancelEverything = true }
        events.wake()
    }

    /// The consumer is done with one outcome: another transfer may be admitted.
    func release() {
        let before = unreleased.subtract(1, ordering: .relaxed).oldValue
        if Self.releaseWakesEngine(before: before, backlog: configuration.effectiveDecodeBacklog) { events.wake() }
    }

    /// Whether the release that took the backlog down from `before` must wake the engine thread.
    /// Only a full backlog holds admission back (transfers still running when it filled may push
    /// it past full), and the engine is nudged once, when the backlog has drained by a quarter: it
    /// then admits that many transfers in one loop turn. Waking it at every release from a full
    /// backlog cost a socketpair write and an engine loop turn per image while decoding was the
    /// bottleneck. Releases count down one at a time, so every descent passes the mark; the
    /// decoders still have three quarters of the backlog queued meanwhile.
    static func releaseWakesEngine(before: Int, backlog: Int) -> Bool {
        before == backlog - max(1, backlog / 4) + 1
    }

    /// Lets the engine finish what it has, then stops its thread and frees libcurl's state.
    func close() {
        inbox.withLock { $0.closing = true }
        events.wake()
        finished.wait()
    }

    // MARK: - Engine thread

    private func run() {
        while true {
            let mail = inbox.withLock { box in
                let mail = box
                box.submitted.removeAll()
                box.cancelled.removeAll()
                box.cancelEverything = false
                return mail
            }
            for transfer in mail.submitted {
                if refusing.load(ordering: .relaxed) && !transfer.request.isStore {
                    cancelTransfer(transfer)
                } else {
                    enqueue(transfer)
                }
            }
            for transfer in mail.cancelled { cancelTransfer(transfer) }
            if mail.cancelEverything {
                for transfer in scheduler.removeAll() { cancelTransfer(transfer) }
                for handle in Array(running.values) where !transferOf(handle).request.isStore {
                    cancelTransfer(transferOf(handle))
                }
            }
            if mail.closing && running.isEmpty && scheduler.isEmpty && storeScheduler.isEmpty {
                // Leave only with an empty inbox, so that no store exchange is left waiting.
                let leaving = inbox.withLock { box in
                    box.stopped = box.submitted.isEmpty && box.cancelled.isEmpty
                    return box.stopped
                }
                if leaving { break }
                continue
            }

            topUp()
            var stillRunning: Int32 = 0
            let timerDue = events.wait(timeout: waitTimeoutMilliseconds()) { socket, flags in
                curl_multi_socket_action(multi, socket, flags, &stillRunning)
            }
            if timerDue { curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &stillRunning) }
            drainMessages()
        }
        shutDown()
    }

    /// Puts a new transfer (or one redirected to another host) in line, unless its host is down.
    private func enqueue(_ transfer: Transfer, startAt: UInt64? = nil) {
        if let error = inLine(of: transfer, { $0.gates.failure(of: transfer.hostKey) }) { return fail(transfer, error) }
        inLine(of: transfer) { line in
            if let startAt {
                line.enqueue(transfer, startAt: startAt)
            } else {
                line.enqueue(transfer)
            }
        }
    }

    private func topUp() {
        for note in protocolLog.drain() {
            scheduler.learn(host: note.host, multiplexes: note.multiplexes)
            storeScheduler.learn(host: note.host, multiplexes: note.multiplexes)
        }
        let now = Self.monotonicNow()
        while running.count < configuration.concurrency, let transfer = storeScheduler.next(now: now) {
            start(transfer)
        }
        while !refusing.load(ordering: .relaxed), running.count < configuration.concurrency,
              unreleased.load(ordering: .relaxed) < configuration.effectiveDecodeBacklog,
              let transfer = scheduler.next(now: now) {
            start(transfer)
        }
    }

    /// How long the loop may wait: until libcurl's timer, a held-back retry's start or a parked
    /// host's opening (only while a transfer could start: with every slot taken, what frees one
    /// wakes the loop anyway, and a due start would make it spin), or at most a second.
    private func waitTimeoutMilliseconds() -> Int32 {
        let now = Self.monotonicNow()
        var timeout = events.timerMilliseconds(now: now) ?? 1000
        let canStart = running.count < configuration.concurrency
            && unreleased.load(ordering: .relaxed) < configuration.effectiveDecodeBacklog
        if canStart, let startAt = scheduler.nextStartAt {
            timeout = min(timeout, startAt <= now ? 0 : Int((startAt - now) / 1_000_000 + 1))
        }
        if running.count < configuration.concurrency, let startAt = storeScheduler.nextStartAt {
            timeout = min(timeout, startAt <= now ? 0 : Int((startAt - now) / 1_000_000 + 1))
        }
        return Int32(min(1000, timeout))
    }

    private func start(_ transfer: Transfer) {
        if transfer.stage != .redirecting { transfer.attempts += 1 }
        resumesWaiting.remove(transfer.id)
        transfer.stage = .running
        transfer.resetAttempt()
        transfer.protocolLog = protocolLog
        transfer.optOutAgent = configuration.ignoresOptOut || !transfer.request.checksOptOut ? nil : DownloaderConfiguration.productToken
        transfer.body.heldBodyBudget = heldBodyBudget
        transfer.requestTime = Date().timeIntervalSince1970
        let handle: OpaquePointer
        if let exchange = transfer.request.store {
            handle = idleStoreHandles.popLast() ?? curl_easy_init()!
            options.configureStore(handle, for: transfer, exchange)
        } else {
            handle = idleHandles.popLast() ?? options.makeHandle()
            options.configure(handle, for: transfer)
        }
        CCurl_easy_setopt_pointer(handle, CURLOPT_PRIVATE, Unmanaged.passRetained(transfer).toOpaque())
        running[transfer.id] = handle
        curl_multi_add_handle(multi, handle)
        transfer.progress.reportStart()
    }

    private func drainMessages() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            complete(handle, code: code)
        }
    }

    /// Takes a finished attempt off the multi handle and decides: done, redirect, retry or fail.
    private func complete(_ handle: OpaquePointer, code: CURLcode) {
        let transfer = detach(handle)
        var decision = transfer.request.store.map { StoreAttemptClassifier.classify(transfer, exchange: $0, code: code) }
            ?? AttemptClassifier.classify(transfer, code: code, handle: handle, configuration: configuration)
        let host = transfer.hostKey
        let answer = AttemptClassifier.hostAnswer(decision, transfer, handle: handle, now: Date().timeIntervalSince1970,
                                                  retryAfterCap: configuration.retryPolicy.retryAfterCap)
        recycle(handle, of: transfer)
        let (tripped, paused) = inLine(of: transfer) { line in
            line.didStop(hostKey: host)
            return line.record(answer, host: host, now: Self.monotonicNow())
        }
        if let paused { configuration.onHostPaused?(host, paused) }
        if let tripped {
            // This attempt's own error stays when it is final; a retry it would have had fails
            // with the breaker's error, which names this one.
            if case .retry = decision { decision = .failed(tripped) }
            for pending in inLine(of: transfer, { $0.removeAll(of: host) }) { fail(pending, tripped) }
        }

        switch decision {
        case .answered:
            transfer.stage = .finished
            transfer.onAnswer?(transfer.storeAnswer())
        case .fetched:
            let body: ReceivedBody
            do {
                body = try transfer.body.finish()
            } catch {
                fail(transfer, error)
                return
            }
            transfer.progress.reportFinal(bytes: body.bytes)
            finish(transfer, .fetched(body, transfer.responseMetadata()))
        case .notModified:
            finish(transfer, .notModified(transfer.responseMetadata()))
        case .redirect(let target):
            transfer.redirects += 1
            if target.origin != transfer.url.origin { transfer.leftOrigin = true }
            transfer.currentURL = target
            transfer.stage = .redirecting
            enqueue(transfer, startAt: 0)
        case .retry(let error):
            let now = Date().timeIntervalSince1970
            guard transfer.request.store?.once != true,
                  let delay = configuration.retryPolicy.delay(afterFailedAttempts: transfer.attempts, retryAfter: transfer.response.retryAfter,
                                                              now: now, random: Double.random(in: 0..<1)) else {
                fail(transfer, error)
                return
            }
            // A large body cut off keeps what it has, and the next attempt asks for the rest
            // (`BodyResume`), while no more wait so than transfers run. Otherwise the next attempt
            // makes a new temp file at its first byte: a waiting retry holds no descriptor and
            // none of the held-body budget, however many wait.
            transfer.resumePoint = resumesWaiting.count < configuration.concurrency ? BodyResume.after(transfer) : nil
            if transfer.resumePoint == nil {
                transfer.body.tempFile = nil
            } else {
                resumesWaiting.insert(transfer.id)
            }
            transfer.stage = .waiting
            enqueue(transfer, startAt: Self.monotonicNow() + UInt64(delay * 1e9))
        case .failed(let error):
            fail(transfer, error)
        }
    }

    /// The transfer a running handle belongs to (CURLOPT_PRIVATE), without releasing it.
    private func transferOf(_ handle: OpaquePointer) -> Transfer {
        var privatePointer: UnsafeMutableRawPointer?
        CCurl_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &privatePointer)
        return Unmanaged<Transfer>.fromOpaque(privatePointer!).takeUnretainedValue()
    }

    /// Removes a running handle from the multi handle and balances the retain taken in `start`.
    private func detach(_ handle: OpaquePointer) -> Transfer {
        var privatePointer: UnsafeMutableRawPointer?
        CCurl_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &privatePointer)
        let transfer = Unmanaged<Transfer>.fromOpaque(privatePointer!).takeRetainedValue()
        CCurl_easy_setopt_pointer(handle, CURLOPT_PRIVATE, nil)
        curl_multi_remove_handle(multi, handle)
        running[transfer.id] = nil
        return transfer
    }

    /// A pending transfer stays in the scheduler as a tombstone that `next` skips; a running one is detached now.
    private func cancelTransfer(_ transfer: Transfer) {
        guard transfer.stage != .cancelled, transfer.stage != .finished else { return }
        transfer.stage = .cancelled
        if let handle = running[transfer.id] {
            _ = detach(handle)
            recycle(handle, of: transfer)
            inLine(of: transfer) { $0.didStop(hostKey: transfer.hostKey) }
        }
        finish(transfer, .failed(.cancelled, attempts: transfer.attempts, httpStatus: nil))
    }

    /// Ends `transfer` with `error`, with the status and protocol of its last response, if any.
    private func fail(_ transfer: Transfer, _ error: DownloadError) {
        finish(transfer, .failed(error, attempts: transfer.attempts, httpStatus: transfer.response.statusIfAny,
                                 httpVersion: transfer.response.httpVersion))
    }

    private func finish(_ transfer: Transfer, _ outcome: TransferOutcome) {
        // A cancelled transfer stays cancelled: the scheduler may still hold it as a tombstone.
        if transfer.stage != .cancelled { transfer.stage = .finished }
        transfer.body.tempFile = nil
        resumesWaiting.remove(transfer.id)
        // A store exchange's answer needs no decoding: it is no part of the decode backlog.
        if !transfer.request.isStore { unreleased.add(1, ordering: .relaxed) }
        transfer.onFinish(outcome)
    }

    /// Runs `body` on the line `transfer` waits in: the downloads' or the store exchanges'.
    private func inLine<T>(of transfer: Transfer, _ body: (inout TransferScheduler) -> T) -> T {
        transfer.request.isStore ? body(&storeScheduler) : body(&scheduler)
    }

    /// Keeps a handle that is done for the next transfer of its kind.
    private func recycle(_ handle: OpaquePointer, of transfer: Transfer) {
        if transfer.request.isStore { idleStoreHandles.append(handle) } else { idleHandles.append(handle) }
    }

    private func shutDown() {
        for handle in running.values { curl_multi_remove_handle(multi, handle) }
        options.saveCookies()
        for handle in idleHandles + idleStoreHandles + running.values { curl_easy_cleanup(handle) }
        idleHandles.removeAll()
        idleStoreHandles.removeAll()
        running.removeAll()
        options.cleanUp()
        finished.signal()
    }

    deinit {
        // Not in shutDown: decode-stage threads may still call release(), which wakes the (finished) loop.
        curl_multi_cleanup(multi)
    }

    static func monotonicNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

extension Engine: StoreTransport {
    func run(_ exchange: StoreExchange, stop: CancelSignal) throws(DownloadError) -> StoreAnswer {
        // The store's origin, for the per-host limits; the exchange's URL itself is sent as signed.
        guard let origin = try? ParsedURL(exchange.url) else {
            throw DownloadError(.storage, "\(exchange.url) is not a URL the engine can send")
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<StoreAnswer, DownloadError>?>(nil)
        let transfer = Transfer(id: storeIDs.subtract(1, ordering: .relaxed).newValue, exchange: exchange, origin: origin) { answer in
            outcome.withLock { $0 = .success(answer) }
            done.signal()
        } onFinish: { result in
            // Only a failure comes here (an answer goes to `onAnswer`); anything else still ends the wait.
            if case .failed(let error, let attempts, _, _) = result {
                let tries = attempts > 1 && error.kind != .cancelled ? " (after \(attempts) attempts)" : ""
                outcome.withLock { $0 = .failure(DownloadError(error.kind, error.message + tries)) }
            }
            done.signal()
        }
        // Submitted before the ending is registered, so that a cancel always reaches the engine
        // after the transfer it names (a stop already requested cancels it at once).
        let accepted = inbox.withLock { box in
            guard !box.stopped else { return false }
            box.submitted.append(transfer)
            return true
        }
        guard accepted else {
            throw DownloadError(.storage, "\(exchange.method.rawValue) \(exchange.url): the run's transfers have ended")
        }
        events.wake()
        if exchange.once {
            done.wait()
        } else {
            stop.whileRunning(ending: { [self] in cancel(transfer) }) { done.wait() }
        }
        switch outcome.withLock({ $0 }) {
        case .success(let answer): return answer
        case .failure(let error): throw error
        case nil: throw DownloadError(.storage, "\(exchange.method.rawValue) \(exchange.url): no answer")
        }
    }
}
