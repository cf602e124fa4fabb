import CCurl
import Dispatch
import FoundationEssentials
import Glibc
import ImgFetchCore

/// The `imgfetch` program: parse the command line, stream the lists into the downloader, report, exit.
public enum ImgFetchCommand {
    /// Exit codes of the contract in docs/ARCHITECTURE.md; `Run` returns 128 + the signal number
    /// for SIGINT, SIGTERM and a broken pipe.
    public enum ExitCode {
        public static let success: Int32 = 0
        public static let itemFailed: Int32 = 1
        public static let usage: Int32 = 2
    }

    /// The line that tells a user at a terminal where imgfetch is reading from: without it, a run
    /// with no list given (or `-`) on a terminal just waits, silently, for typed URLs.
    static func terminalHint(paths: [String], stdinIsTerminal: Bool) -> String? {
        guard stdinIsTerminal, paths.isEmpty || paths.contains("-") else { return nil }
        return "imgfetch: reading URLs from the terminal; end with Ctrl-D\n"
    }

    /// Every list, opened before anything starts: one that cannot be read is a usage error (exit 2),
    /// and so is a list of URLs (by its name) whose first line looks like a table's.
    private static func openLists(_ options: CommandLineOptions) throws(SetupError) -> [ListSource] {
        let sources: [ListSource]
        do {
            sources = try ListSource.openAll(options.lists, settings: options.table)
        } catch {
            throw SetupError(message: error.message)
        }
        if !options.inputFormatGiven && options.table.format == .txt {
            for source in sources where source.descriptor >= 0 {
                if let problem = tableLookingList(source) { throw SetupError(message: problem) }
            }
        }
        return sources
    }

    /// What is wrong with reading `source` as a list of URLs when its first line looks like a
    /// table's header or a JSON object (a regular file only: a pipe cannot be read twice).
    static func tableLookingList(_ source: ListSource) -> String? {
        guard let line = ListSniffer.firstLine(of: source.descriptor),
              let format = ListSniffer.tableLook(ofFirstLine: line) else { return nil }
        let shown = line.count > 60 ? line.prefix(57) + "..." : Substring(line)
        let kind = format == .jsonl ? "JSON Lines" : "a " + format.rawValue.uppercased() + " table"
        return "\(source.name) looks like \(kind), not a list of URLs (its first line is '\(shown)'): "
            + "give --input-format \(format.rawValue) (and --url-column if its URLs are not in 'url'), "
            + "or name the file .\(format.rawValue)"
    }

    /// The spelling of `--failures-are-data`, looked for in arguments that did not parse.
    static let workerFlag = "--failures-are-data"

    /// The byte ranges of `arguments` (without argv[0]) that hold secrets, for the program to mask
    /// in its own argv before it runs (`SecretRedactor.secretRanges`).
    public static func secretRanges(_ arguments: [String]) -> [(argument: Int, bytes: Range<Int>)] {
        SecretRedactor.secretRanges(arguments)
    }

    /// Runs the program with `arguments` (without argv[0]) and returns its exit code.
    public static func run(_ arguments: [String]) -> Int32 {
        let stdout = FileDescriptorSink(descriptor: STDOUT_FILENO)
        let stderr = FileDescriptorSink(descriptor: STDERR_FILENO)
        var options: CommandLineOptions
        if let translation = Img2datasetCommandLine.translate(arguments) {
            stderr.write("imgfetch: \(Img2datasetCommandLine.message(translation))\nTry 'imgfetch --help' for more information.\n")
            return ExitCode.usage
        }
        do {
            options = try OptionParser.parse(arguments)
            try RunEnvironment.apply(ProcessInfo.processInfo.environment, to: &options)
        } catch {
            stderr.write("imgfetch: \(error)\nTry 'imgfetch --help' for more information.\n")
            // Which arguments are lists is not known here: stdin is drained when it is surely one,
            // given as `-` or with no argument that could name a file.
            if arguments.contains(workerFlag) && (arguments.contains("-") || arguments.allSatisfy({ $0.hasPrefix("-") })) {
                WorkerExit.drainStandardInput(lists: [])
            }
            return ExitCode.usage
        }
        switch options.action {
        case .help(let topic):
            stdout.write(HelpText.text(for: topic))
            return ExitCode.success
        case .version:
            stdout.write("imgfetch \(DownloaderConfiguration.version) (\(LibcurlVersion.description))\n")
            return ExitCode.success
        case .manPage:
            stdout.write(ManPage.text)
            return ExitCode.success
        case .completions(let shell):
            stdout.write(shell.script)
            return ExitCode.success
        case .run:
            break
        }
        if let given = options.credentials {
            guard let complete = PasswordPrompt.complete(given) else {
                stderr.write("imgfetch: option '-u' names user '\(given)' without a password, and there is no terminal to ask "
                    + "it on: give -u USER:PASSWORD, or put the host in a netrc file (--netrc)\n"
                    + "Try 'imgfetch --help' for more information.\n")
                return ExitCode.usage
            }
            options.credentials = complete
        }
        // A closed stdout (`imgfetch … | head`) must not kill the process mid-write: EPIPE stops the run instead.
        signal(SIGPIPE, SIG_IGN)
        // Shard rows wait for the ones before them, each holding its output file: a smaller window.
        let window = options.outputFormat == .webdataset
            ? RunControl.datasetWindow(concurrency: options.concurrency) : RunControl.window(concurrency: options.concurrency)
        let control = RunControl(maxOutstanding: window)
        let results = FileDescriptorSink(descriptor: STDOUT_FILENO) { control.stop(.brokenPipe) }
        var reportFile: ReportFile?
        var gallery: GalleryRecorder?
        var runLock: RunLock?
        defer { withExtendedLifetime(runLock) {} }
        do {
            if !options.quiet, let hint = terminalHint(paths: options.lists, stdinIsTerminal: isatty(STDIN_FILENO) == 1) {
                stderr.write(hint)
            }
            // A table's header is read here: a missing URL column is a usage error before anything starts.
            let lists = try openLists(options)
            try prepareOutputDirectory(options.outputDirectory)
            // --work-dir with a local output: the index's folder there (a WebDataset run keeps none).
            let index = options.outputFormat == .files
                ? options.downloaderConfiguration(outputDirectory: options.outputDirectory).indexDirectory : nil
            if let index { try prepareOutputDirectory(index) }
            // One run per output (and work directory) at a time: a second one waits, or skips.
            let quiet = options.quiet
            runLock = try RunLock.acquire([options.outputDirectory] + (index.map { [$0] } ?? []), whenHeld: options.ifRunning) { line in
                if !quiet { stderr.write(line) }
            }
            options.freshSince = runLock?.waitedSince
            try ObjectStoreOutput(options)?.checkStart()
            let backlog = options.downloaderConfiguration(outputDirectory: ".").effectiveDecodeBacklog
            let heldOutputs = options.outputFormat == .webdataset ? window : 0
            try FileDescriptorLimit.ensure(FileDescriptorLimit.needed(concurrency: options.concurrency, backlog: backlog + heldOutputs),
                                           concurrency: options.concurrency)
            reportFile = try options.reportFile.map { path throws(SetupError) in try ReportFile(path: path) }
            gallery = try options.galleryFile.map { path throws(SetupError) in
                try GalleryRecorder(path: path, outputDirectory: options.outputDirectory,
                                    limits: options.downloaderConfiguration(outputDirectory: ".").decodeLimits)
            }
            let model = ProgressModel(now: monotonicSeconds())
            let terminals = OutputTerminals.detect()
            let display = statusDisplay(options, arguments: arguments, model: model, stderr: stderr, terminals: terminals)
            let output = ResultOutput.choose(jsonl: options.jsonl, quiet: options.quiet, terminals: terminals,
                                             colors: colorsAllowed(onTerminal: terminals.stdoutIsTerminal),
                                             stdout: results, display: display)
            let reporter = RunReporter(results: output, display: display, model: model, reportFile: reportFile,
                                       quiet: options.quiet, verbose: options.verbose, gallery: gallery)
            let signals = SignalWatcher { number in control.stop(.interrupted(signal: number)) }
            defer { withExtendedLifetime(signals) {} }
            return try Run(options: options, reporter: reporter, control: control).execute(lists)
        } catch {
            // The run never started: its report must not appear, not even as FILE.part.
            reportFile?.discard()
            gallery?.discard()
            stderr.write("imgfetch: \(error.message)\n")
            if options.failuresAreData { WorkerExit.drainStandardInput(lists: options.lists) }
            if let code = error.exitCode { return code }
            guard options.failuresAreData else { return ExitCode.usage }
            return error.isTemporary ? WorkerExit.temporaryFailure : ExitCode.usage
        }
    }

    /// Picks how stderr shows progress: `auto` means a bar on a terminal (unless TERM=dumb), nothing otherwise.
    static func statusDisplay(_ options: CommandLineOptions, arguments: [String], model: ProgressModel, stderr: TextSink,
                              terminals: OutputTerminals) -> StatusDisplay {
        let environment = ProcessInfo.processInfo.environment
        let terminal = terminals.stderrIsTerminal && environment["TERM"] != "dumb"
        var mode = options.quiet ? .none : options.progress
        let automatic = mode == .auto
        if mode == .auto { mode = terminal ? .bar : .none }
        switch mode {
        case .bar:
            let renderer = TerminalProgressRenderer(sink: stderr, size: { TerminalSize.of(STDERR_FILENO) },
                                                    colors: colorsAllowed(onTerminal: terminals.stderrIsTerminal),
                                                    rewrapsOnResize: TerminalSize.rewrapsOnResize(environment))
            // `imgfetch … | jq` on a terminal: jq prints where the frames are drawn. An explicit
            // `--progress bar` is kept; `auto` gives the screen to the reader.
            let sharing: (@Sendable () -> Bool)? = automatic && PipeReaderProbe.isPipe(STDOUT_FILENO)
                ? { @Sendable in PipeReaderProbe.readerWritesToTerminal() } : nil
            let typing = terminalHint(paths: options.lists, stdinIsTerminal: isatty(STDIN_FILENO) == 1) != nil
            return BarStatusDisplay(renderer: renderer, model: model, screenIsShared: sharing, waitsForTheList: typing)
        case .plain:
            return PlainStatusDisplay(sink: stderr, model: model, interval: options.progressInterval,
                                      startLine: startLine(options, arguments: arguments))
        case .auto, .none:
            return PlainStatusDisplay(sink: stderr, model: model, interval: nil)
        }
    }

    /// What a log's first line says of a run (after the time): `start: imgfetch 0.1.0, pid 4242, in /srv:
    /// urls.txt -o pics --progress plain; lists: urls.txt; output: pics`, secrets redacted.
    static func startLine(_ options: CommandLineOptions, arguments: [String]) -> String {
        var directory = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let cwd = getcwd(&directory, directory.count) != nil
            ? String(decoding: directory.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        let lists = options.lists.isEmpty ? "<stdin>" : options.lists.map(SecretRedactor.redactURLText).joined(separator: ", ")
        let output = options.objectStore.map { "\($0)" } ?? options.outputDirectory
        return "start: imgfetch \(DownloaderConfiguration.version), pid \(getpid()), in \(cwd): "
            + SecretRedactor.shellWords(SecretRedactor.redactArguments(arguments)) + "; lists: \(lists); output: \(output)"
    }

    /// Colors only on a terminal, and not when `NO_COLOR` is set (no-color.org) or `TERM` is `dumb`.
    static func colorsAllowed(onTerminal terminal: Bool) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return terminal && environment["TERM"] != "dumb" && environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// Creates the output directory if needed and checks that files can be created in it.
    static func prepareOutputDirectory(_ path: String) throws(SetupError) {
        if let failure = makeDirectories(path) {
            throw SetupError(message: "cannot create output directory '\(path)': \(failure)", isTemporary: true)
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw SetupError(message: "output directory '\(path)' is not a directory")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw SetupError(message: "cannot write to output directory '\(path)': \(Errno.describe())", isTemporary: true)
        }
    }
}

/// Creates `path` and any missing parents, as `mkdir -p` does; the reason (strerror) when it cannot.
/// A component that exists already is fine here; whether the whole path is a directory is checked next.
private func makeDirectories(_ path: String) -> String? {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
        prefix += component
        if mkdir(prefix, 0o777) != 0 && errno != EEXIST { return Errno.describe() }
        prefix += "/"
    }
    return nil
}

/// A problem that stops the run before it starts (exit 2).
struct SetupError: Error {
    let message: String
    /// The environment, not the command, is at fault (the output directory cannot be created or
    /// written): a worker exits 75 so that its engine tries again (`WorkerExit`).
    var isTemporary = false
    /// The exit code in every mode, when it is not 2 (or 75 for a worker): `--if-running skip`'s 75.
    var exitCode: Int32?
}
