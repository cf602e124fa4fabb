import Glibc

/// errno as text, the one way imgfetch words a failed system call ("No space left on device").
///
/// glibc's `strerror` is thread-safe for every errno the kernel sets (it returns its constant
/// table's text, and a per-thread buffer only for unknown numbers).
public enum Errno {
    /// The text of `code`; of the calling thread's current errno by default.
    public static func describe(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
