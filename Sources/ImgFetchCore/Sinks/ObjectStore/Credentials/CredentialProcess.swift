import Glibc

/// Runs a profile's `credential_process` as the AWS SDKs do: the command split into words as a
/// POSIX shell would (quotes and backslashes, no expansion) and run without a shell, its standard
/// output read as the keys' JSON, its standard error kept for the message when it fails.
enum CredentialProcess {
    /// Most bytes of output kept from either stream.
    static let outputLimit = 64 << 10
    /// A command that has not finished by then is killed.
    static let timeout = 60.0

    struct Output {
        let status: Int32
        let stdout: [UInt8]
        let stderr: [UInt8]
    }

    /// The command's words, or nil when a quote is not closed.
    static func words(_ command: String) -> [String]? {
        var words: [String] = []
        var current: [UInt8] = []
        var inWord = false
        var quote: UInt8?
        var bytes = Array(command.utf8).makeIterator()
        while let byte = bytes.next() {
            if let open = quote {
                if byte == open {
                    quote = nil
                } else if open == UInt8(ascii: "\""), byte == UInt8(ascii: "\\") {
                    guard let next = bytes.next() else { return nil }
                    if next != UInt8(ascii: "\""), next != UInt8(ascii: "\\"), next != UInt8(ascii: "$"), next != UInt8(ascii: "`") {
                        current.append(byte)
                    }
                    current.append(next)
                } else {
                    current.append(byte)
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A:
                if inWord { words.append(String(decoding: current, as: UTF8.self)) }
                current = []
                inWord = false
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                quote = byte
                inWord = true
            case UInt8(ascii: "\\"):
                guard let next = bytes.next() else { return nil }
                if next != 0x0A { current.append(next) }
                inWord = true
            default:
                current.append(byte)
                inWord = true
            }
        }
        guard quote == nil else { return nil }
        if inWord { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }

    /// Runs `arguments` (found on PATH) and waits for it, reading both streams as it goes.
    static func run(_ arguments: [String]) -> Result<Output, DownloadError> {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard pipe(&out) == 0 else { return .failure(DownloadError(.storage, "cannot make a pipe: \(Errno.describe())")) }
        guard pipe(&err) == 0 else {
            close(out[0]); close(out[1])
            return .failure(DownloadError(.storage, "cannot make a pipe: \(Errno.describe())"))
        }
        // Close-on-exec: the child has them only as its stdout and stderr (dup2 clears the flag).
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(out[1]); close(err[1])
        guard spawned == 0 else {
            close(out[0]); close(err[0])
            return .failure(DownloadError(.storage, "cannot run \(arguments[0]): \(Errno.describe(spawned))"))
        }
        var streams: [(fd: Int32, bytes: [UInt8])] = [(out[0], []), (err[0], [])]
        let deadline = monotonicSeconds() + timeout
        var open = 2
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while open > 0 {
            var fds = streams.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let left = deadline - monotonicSeconds()
            guard left > 0 else { timedOut = true; break }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(left, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { break }
            for index in streams.indices where streams[index].fd >= 0 && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(streams[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    streams[index].bytes.append(contentsOf: buffer[..<min(count, max(0, outputLimit - streams[index].bytes.count))])
                } else if count == 0 || errno != EINTR {
                    close(streams[index].fd)
                    streams[index].fd = -1
                    open -= 1
                }
            }
        }
        if timedOut { kill(pid, SIGKILL) }
        for stream in streams where stream.fd >= 0 { close(stream.fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if timedOut {
            return .failure(DownloadError(.storage, "\(arguments[0]) did not finish within \(Int(timeout)) s and was killed"))
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return .success(Output(status: code, stdout: streams[0].bytes, stderr: streams[1].bytes))
    }
}
