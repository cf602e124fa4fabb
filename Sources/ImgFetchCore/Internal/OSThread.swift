import CThreadName
import Glibc

/// Starts a detached pthread named `name` running `body`.
///
/// In place of Foundation's `Thread`, which imgfetch cannot use without importing Foundation (see
/// `ConditionLock`). Linux keeps the first 15 bytes of a thread's name.
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let status = pthread_create(&thread, &attributes, { context in
        let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
        CThreadName_setCurrent(start.name)
        start.body()
        return nil
    }, context)
    // As with Foundation's Thread: a process that cannot start its few threads cannot run at all.
    precondition(status == 0, "imgfetch: cannot start thread \(name): error \(status)")
}
