import Glibc

/// Finds out whether the program reading imgfetch's stdout prints on imgfetch's terminal while
/// imgfetch runs, as `imgfetch list | jq .status` does: its lines would land between the live
/// area's frames, and every redraw would overwrite some of them.
///
/// Linux only: each process's descriptors are read as the links in `/proc/PID/fd` (`readlink`,
/// which never touches the file behind them, so a hung network mount cannot block it). A pipe is
/// followed through further pipes (`| jq | head`), a few stages deep. Processes of other users
/// (`| sudo tee`) and readers that open `/dev/tty` themselves are not seen.
enum PipeReaderProbe {
    /// Whether `descriptor` is a pipe (or FIFO): the only case where a reader can share the screen.
    static func isPipe(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
    }

    /// Whether a process that reads the pipe on `stdout` (or a pipe fed by such a process) has
    /// its stdout on the terminal of `terminal`. A reader's stderr does not count: it is nearly
    /// always the terminal and carries only the odd error.
    static func readerWritesToTerminal(stdout: Int32 = STDOUT_FILENO, terminal: Int32 = STDERR_FILENO) -> Bool {
        guard let pipe = link("/proc/self/fd/\(stdout)"), pipe.hasPrefix("pipe:"),
              let tty = link("/proc/self/fd/\(terminal)"), tty.hasPrefix("/dev/") else { return false }
        let processes = scanProcesses()
        var frontier: Set<String> = [pipe]
        var seen = frontier
        for _ in 0..<maxStages where !frontier.isEmpty {
            var next: Set<String> = []
            for process in processes where frontier.contains(process.input) {
                guard let output = process.output, !printsOnlyAtTheEnd(process.name) else { continue }
                if output == tty { return true }
                if output.hasPrefix("pipe:"), seen.insert(output).inserted { next.insert(output) }
            }
            frontier = next
        }
        return false
    }

    /// Pipeline stages followed after imgfetch's own.
    static let maxStages = 4

    /// Programs that print only once their input ends, after imgfetch's last frame: `| wc -l`
    /// and `| sort` keep the live area.
    static func printsOnlyAtTheEnd(_ command: String) -> Bool {
        ["wc", "sort", "tac", "shuf", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum"].contains(command)
    }

    private struct Process {
        var name: String
        /// The link of stdin (`pipe:[123]`), and of stdout (`/dev/pts/3`, `pipe:[456]`).
        var input: String
        var output: String?
    }

    /// Every process of this user whose stdin is a pipe.
    private static func scanProcesses() -> [Process] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        let own = getpid()
        var processes: [Process] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != own,
                  let input = link("/proc/\(pid)/fd/0"), input.hasPrefix("pipe:") else { continue }
            processes.append(Process(name: command(pid), input: input, output: link("/proc/\(pid)/fd/1")))
        }
        return processes
    }

    /// What a `/proc` link points to, or nil (no such descriptor, another user's process).
    private static func link(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// The process's command name (`/proc/PID/comm`), empty when unreadable.
    private static func command(_ pid: Int32) -> String {
        let descriptor = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBufferPointer { read(descriptor, $0.baseAddress!, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix(count).prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
