import Glibc

/// Finds out whether the program reading imgfetch's stdout writes to imgfetch's terminal, as
/// `imgfetch list | jq .status` does: then the reader's lines land between the live area's
/// frames, and every redraw overwrites some of them.
///
/// Linux only: each process's descriptors are read from `/proc/PID/fd`. A pipe is followed
/// through further pipes (`| jq | head`), a few stages deep.
enum PipeReaderProbe {
    /// Whether a process that reads the pipe on `stdout` (or reads a pipe fed by such a
    /// process) has its stdout on the terminal of `terminal`. Its stderr is nearly always the
    /// terminal too, and carries only the odd error: that alone keeps the live area.
    static func readerWritesToTerminal(stdout: Int32 = STDOUT_FILENO, terminal: Int32 = STDERR_FILENO) -> Bool {
        var pipe = stat()
        var tty = stat()
        guard fstat(stdout, &pipe) == 0, pipe.st_mode & S_IFMT == S_IFIFO,
              fstat(terminal, &tty) == 0, tty.st_mode & S_IFMT == S_IFCHR else { return false }
        let processes = scanProcesses()
        var frontier: Set<FileIdentity> = [FileIdentity(pipe)]
        var seen = frontier
        for _ in 0..<maxStages where !frontier.isEmpty {
            var next: Set<FileIdentity> = []
            for process in processes where process.input.map(frontier.contains) == true {
                guard let output = process.output else { continue }
                if output.isCharacterDevice && output.device == tty.st_rdev { return true }
                if output.isPipe, seen.insert(output).inserted { next.insert(output) }
            }
            frontier = next
        }
        return false
    }

    /// Pipeline stages followed after imgfetch's own.
    static let maxStages = 4

    /// What a descriptor refers to: a pipe by its inode, a terminal by its device number.
    private struct FileIdentity: Hashable {
        var mode: UInt32
        var fileSystem: UInt
        var inode: UInt
        var device: UInt

        init(_ status: stat) {
            mode = status.st_mode & S_IFMT
            fileSystem = UInt(status.st_dev)
            inode = UInt(status.st_ino)
            device = UInt(status.st_rdev)
        }

        var isPipe: Bool { mode == S_IFIFO }
        var isCharacterDevice: Bool { mode == S_IFCHR }
    }

    private struct Process {
        var input: FileIdentity?
        var output: FileIdentity?
    }

    /// stdin and stdout of every process whose descriptors this user may see.
    private static func scanProcesses() -> [Process] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        let own = getpid()
        var processes: [Process] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != own else { continue }
            func identity(_ descriptor: Int) -> FileIdentity? {
                var status = stat()
                return stat("/proc/\(pid)/fd/\(descriptor)", &status) == 0 ? FileIdentity(status) : nil
            }
            guard let input = identity(0), input.isPipe else { continue }
            processes.append(Process(input: input, output: identity(1)))
        }
        return processes
    }
}
