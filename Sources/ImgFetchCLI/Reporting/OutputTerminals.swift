import Glibc

/// Which of stdout and stderr are terminals, and whether both are the same terminal.
///
/// When they are, result lines and the live progress area share one screen and must go through
/// one writer (the renderer), or each result line lands where the next frame overwrites it.
struct OutputTerminals: Equatable {
    var stdoutIsTerminal: Bool
    var stderrIsTerminal: Bool
    /// Both are terminals, and the same device.
    var shared: Bool
    /// Neither is a terminal, and both are one file or pipe (`>> fetch.log 2>&1`): a failure's
    /// result line is already in it.
    var sameFile = false

    static func detect(stdout: Int32 = STDOUT_FILENO, stderr: Int32 = STDERR_FILENO) -> OutputTerminals {
        let out = isatty(stdout) == 1
        let err = isatty(stderr) == 1
        return OutputTerminals(stdoutIsTerminal: out, stderrIsTerminal: err,
                               shared: out && err && sameDevice(stdout, stderr),
                               sameFile: !out && !err && sameFile(stdout, stderr))
    }

    /// Whether two descriptors are one open file or pipe: the same inode on the same device.
    static func sameFile(_ first: Int32, _ second: Int32) -> Bool {
        var a = stat()
        var b = stat()
        guard fstat(first, &a) == 0, fstat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// Whether two descriptors name the same character device (one terminal opened twice, or
    /// `2>&1`): the device number decides, not the path the shell opened.
    static func sameDevice(_ first: Int32, _ second: Int32) -> Bool {
        var a = stat()
        var b = stat()
        guard fstat(first, &a) == 0, fstat(second, &b) == 0 else { return false }
        return a.st_mode & S_IFMT == S_IFCHR && b.st_mode & S_IFMT == S_IFCHR && a.st_rdev == b.st_rdev
    }
}
