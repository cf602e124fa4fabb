import CMallocTuning
import CProcessArguments
import Glibc
import ImgFetchCLI

// Big decode buffers are reused across decode threads instead of kept once per thread: the large
// set peaked at 99 MiB with glibc's defaults (see CMallocTuning).
CMallocTuning_shareDecodeMemoryAcrossThreads()

// The arguments as main got them, not CommandLine.arguments, which needs /proc (see CProcessArguments).
let arguments = (1..<max(1, Int(CProcessArguments_count()))).map { String(cString: CProcessArguments_at(Int32($0))) }
// Passwords and header values leave /proc/PID/cmdline (ps) at once: every local user can read it.
for secret in ImgFetchCommand.secretRanges(arguments) {
    CProcessArguments_mask(Int32(secret.argument + 1), secret.bytes.lowerBound, secret.bytes.count)
}
let code = ImgFetchCommand.run(arguments)
// Out without exit()'s atexit handlers: OpenSSL's frees its locks while a thread that has not
// yet ended (an engine's, leaving after its close) may still be inside libcurl's TLS code, which
// then crashes on a freed lock (seen: SIGSEGV in pthread_rwlock_rdlock on imgfetch.engine, at the
// exit after a store's certificate was refused). Nothing else registered there is needed: the
// files are written and closed, and stdio is flushed here.
fflush(nil)
_exit(code)
