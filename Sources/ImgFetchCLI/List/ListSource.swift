import Glibc
import ImgFetchCore

/// An opened list: a file or stdin, with the name used in `FILE:LINE` messages.
struct ListSource {
    let name: String
    let descriptor: Int32

    /// The line that tells a user at a terminal where imgfetch is reading from: without it, a run
    /// with no list given (or `-`) on a terminal just waits, silently, for typed URLs.
    static func terminalHint(paths: [String], stdinIsTerminal: Bool) -> String? {
        guard stdinIsTerminal, paths.isEmpty || paths.contains("-") else { return nil }
        return "imgfetch: reading URLs from the terminal; end with Ctrl-D\n"
    }

    /// Opens every list before the run starts, so an unreadable one is a usage error (exit 2), not a half-done run.
    static func openAll(_ paths: [String]) throws(SetupError) -> [ListSource] {
        if paths.isEmpty { return [ListSource(name: "<stdin>", descriptor: STDIN_FILENO)] }
        var sources: [ListSource] = []
        for path in paths {
            if path == "-" {
                sources.append(ListSource(name: "<stdin>", descriptor: STDIN_FILENO))
                continue
            }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw SetupError(message: "cannot read list '\(path)': \(Errno.describe())")
            }
            var info = stat()
            if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw SetupError(message: "cannot read list '\(path)': it is a directory")
            }
            sources.append(ListSource(name: path, descriptor: fd))
        }
        return sources
    }

    func lines() -> LineReader { LineReader(descriptor: descriptor) }
}
