import CCurl
import CSocketEvents
import Dispatch
import Glibc

/// What the engine thread waits on: the sockets libcurl asks it to watch (in an epoll set), the
/// one timer libcurl keeps, and an eventfd that other threads signal to wake it.
///
/// This is libcurl's event-driven interface (`curl_multi_socket_action`). With
/// `curl_multi_perform`, libcurl polled the socket of every running transfer at every turn: over
/// HTTP/2, 64 streams on one connection meant 64 `poll` calls on one socket per turn. With
/// `curl_multi_socket_action`, a turn runs only the transfers whose socket is ready.
///
/// Engine thread only, except `wake()`, which any thread may call (a `write` to the eventfd);
/// hence `@unchecked Sendable`. libcurl calls the callbacks below from inside `curl_multi_*` calls
/// on the engine thread.
final class SocketEvents: @unchecked Sendable {
    private let epoll: Int32
    private let wakeDescriptor: Int32
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` next (monotonic ns).
    private var timerDeadline: UInt64?
    private var readyDescriptors = [Int32](repeating: 0, count: 256)
    private var readyFlags = [Int32](repeating: 0, count: 256)

    init() throws(DownloadError) {
        epoll = CSocketEvents_create()
        wakeDescriptor = CSocketEvents_eventfd()
        guard epoll >= 0, wakeDescriptor >= 0, CSocketEvents_watch(epoll, wakeDescriptor, Int32(CSocketEvents_readable)) == 0 else {
            throw DownloadError(.network, "cannot set up the engine's event loop: \(Errno.describe())")
        }
    }

    deinit {
        close(epoll)
        close(wakeDescriptor)
    }

    /// Registers the callbacks on `multi`; `self` must outlive it.
    func attach(to multi: OpaquePointer) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        CCurl_multi_setopt_socket_callback(multi, socketCallback)
        CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userdata)
        CCurl_multi_setopt_timer_callback(multi, timerCallback)
        CCurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userdata)
    }

    /// Wakes the engine thread from `wait`; thread-safe.
    func wake() {
        CSocketEvents_signal(wakeDescriptor)
    }

    /// Milliseconds until libcurl's timer is due (0 when it is), nil when none is set.
    func timerMilliseconds(now: UInt64) -> Int? {
        guard let timerDeadline else { return nil }
        return timerDeadline <= now ? 0 : Int((timerDeadline - now + 999_999) / 1_000_000)
    }

    /// Waits up to `timeout` ms, then hands each ready socket with its `CURL_CSELECT_*` flags to
    /// `ready`, and reports whether libcurl's timer is due (it is cleared: libcurl sets it again
    /// through the callback while it has timeouts pending).
    func wait(timeout: Int32, ready: (curl_socket_t, Int32) -> Void) -> Bool {
        let count = CSocketEvents_wait(epoll, &readyDescriptors, &readyFlags, Int32(readyDescriptors.count), timeout)
        for index in 0..<Int(max(0, count)) {
            let descriptor = readyDescriptors[index]
            if descriptor == wakeDescriptor {
                CSocketEvents_drain(wakeDescriptor)
            } else {
                ready(descriptor, readyFlags[index])
            }
        }
        guard let deadline = timerDeadline, deadline <= DispatchTime.now().uptimeNanoseconds else { return false }
        timerDeadline = nil
        return true
    }

    fileprivate func update(_ socket: curl_socket_t, what: Int32) {
        guard what != CURL_POLL_REMOVE else { return CSocketEvents_unwatch(epoll, socket) }
        var flags: Int32 = 0
        if what & CURL_POLL_IN != 0 { flags |= Int32(CSocketEvents_readable) }
        if what & CURL_POLL_OUT != 0 { flags |= Int32(CSocketEvents_writable) }
        // A failure here (out of memory) leaves the transfer to libcurl's own timeouts, which
        // fail it with a clear error rather than let it hang.
        _ = CSocketEvents_watch(epoll, socket, flags)
    }

    fileprivate func setTimer(milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    }
}

/// libcurl's socket callback: watch, change or forget one socket.
private let socketCallback: curl_socket_callback = { _, socket, what, userdata, _ in
    Unmanaged<SocketEvents>.fromOpaque(userdata!).takeUnretainedValue().update(socket, what: what)
    return 0
}

/// libcurl's timer callback: call `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` in `timeout` ms (-1: never).
private let timerCallback: curl_multi_timer_callback = { _, timeout, userdata in
    Unmanaged<SocketEvents>.fromOpaque(userdata!).takeUnretainedValue().setTimer(milliseconds: timeout)
    return 0
}
