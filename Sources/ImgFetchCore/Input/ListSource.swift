import Glibc

/// An opened list: a file or stdin, with the name used in `FILE:LINE` messages, read as its
/// format says (a table's header row is read when it is opened); or a URL given as an argument,
/// one item named `<arguments>:N` after its place among the arguments.
///
/// Opened on the main thread, then read by the list reader alone: one thread at a time, hence
/// `@unchecked Sendable`.
public final class ListSource: @unchecked Sendable {
    public let name: String
    public let descriptor: Int32
    private var reader: Reader

    private enum Reader {
        case lines(LineReader)
        case table(TableReader)
        case parquet(ParquetTableReader)
        /// A URL argument: its entry until it is read.
        case argument(line: Int, entry: ListEntry?)
    }

    /// The list name of URLs given as arguments.
    public static let argumentsName = "<arguments>"

    public init(name: String, descriptor: Int32, settings: TableSettings = TableSettings()) throws(ListError) {
        self.name = name
        self.descriptor = descriptor
        switch settings.format {
        case .txt: reader = .lines(LineReader(descriptor: descriptor))
        case .csv: reader = .table(try TableReader(descriptor: descriptor, dialect: .csv, settings: settings, listName: name))
        case .tsv: reader = .table(try TableReader(descriptor: descriptor, dialect: .tsv, settings: settings, listName: name))
        case .jsonl: reader = .table(TableReader(jsonLinesOf: descriptor, settings: settings))
        case .parquet: reader = .parquet(try ParquetTableReader(descriptor: descriptor, settings: settings, listName: name))
        }
    }

    /// A URL given as argument number `position` (from 1): one item, read as a list line is.
    public init(argument: String, position: Int) {
        name = Self.argumentsName
        descriptor = -1
        reader = .argument(line: position, entry: ListLineParser.parse(argument))
    }

    /// Whether a command-line argument is a URL to fetch rather than a list to read: it begins
    /// with `http://` or `https://` (in any case), as the arguments of curl and wget do. A list
    /// file whose name begins so is given as `./http…`.
    public static func isURL(argument: String) -> Bool {
        let start = argument.prefix(8).lowercased()
        return start.hasPrefix("http://") || start.hasPrefix("https://")
    }

    /// Opens every list before the run starts, so an unreadable one (or a table without the URL
    /// column) is a `ListError` before anything starts, not a half-done run.
    public static func openAll(_ paths: [String], settings: TableSettings = TableSettings()) throws(ListError) -> [ListSource] {
        if settings.format == .parquet && (paths.isEmpty || paths.contains("-")) {
            throw ListError(message: "a Parquet list cannot be read from stdin: its footer is at its end; give the file's name")
        }
        if paths.isEmpty { return [try ListSource(name: "<stdin>", descriptor: STDIN_FILENO, settings: settings)] }
        if settings.format != .txt && paths.filter({ $0 == "-" }).count > 1 {
            // A second reader would take a row from the middle of the input for its header.
            throw ListError(message: "stdin ('-') can be given only once with --input-format \(settings.format.rawValue)")
        }
        var sources: [ListSource] = []
        var expanded: [String] = []
        for path in paths { expanded += settings.format == .parquet ? try parquetParts(path) : [path] }
        let paths = expanded
        for (index, path) in paths.enumerated() {
            if isURL(argument: path) {
                sources.append(ListSource(argument: path, position: index + 1))
                continue
            }
            if path == "-" {
                sources.append(try ListSource(name: "<stdin>", descriptor: STDIN_FILENO, settings: settings))
                continue
            }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let failure = errno
                let reason = Errno.describe(failure)
                // `example.com/cat.jpg` or `127.0.0.1:8080/cat.jpg` was meant as a URL.
                let hint = failure == ENOENT && ParsedURL.isMissingItsScheme(path) ? "; to fetch it as a URL, add http:// or https:// in front" : ""
                throw ListError(message: "cannot read list '\(path)': \(reason)\(hint)")
            }
            var info = stat()
            if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw ListError(message: "cannot read list '\(path)': it is a directory")
            }
            sources.append(try ListSource(name: path, descriptor: fd, settings: settings))
        }
        return sources
    }

    /// The Parquet files a list argument names: a directory's `*.parquet` files (a dataset's part
    /// files, by name), a quoted glob's matches (`'parts/*.parquet'`), in order, or the path itself.
    static func parquetParts(_ path: String) throws(ListError) -> [String] {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { return [path] }
            guard let directory = opendir(path) else { throw ListError(message: "cannot read list '\(path)': \(Errno.describe())") }
            defer { closedir(directory) }
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".parquet") && !name.hasPrefix(".") { names.append(name) }
            }
            guard !names.isEmpty else { throw ListError(message: "list '\(path)' is a directory without .parquet files") }
            return names.sorted().map { (path.hasSuffix("/") ? path : path + "/") + $0 }
        }
        guard path.contains(where: { "*?[".contains($0) }) else { return [path] }
        var matches = glob_t()
        defer { globfree(&matches) }
        guard glob(path, 0, nil, &matches) == 0 else { throw ListError(message: "list '\(path)' matches no file") }
        return (0..<Int(matches.gl_pathc)).compactMap { matches.gl_pathv[$0].map { String(cString: $0) } }.sorted()
    }

    /// A table's column names as its header (or Parquet's schema) gives them; empty for a list of
    /// lines, JSON Lines (each row names its own) and a URL argument.
    public var columnNames: [String] {
        switch reader {
        case .table(let table): table.columns
        case .parquet(let table): table.columnNames
        case .lines, .argument: []
        }
    }

    /// Entries read so far that are not blank lines or comments: items, bad lines, a read error.
    public private(set) var entries = 0

    /// The next line or row as a list entry, with its line number; nil at the end of the list.
    public func next() -> (line: Int, entry: ListEntry)? {
        let next = read()
        if let next, next.entry != .skip { entries += 1 }
        return next
    }

    private func read() -> (line: Int, entry: ListEntry)? {
        switch reader {
        case .argument(let line, let entry):
            reader = .argument(line: line, entry: nil)
            return entry.map { (line, $0) }
        case .table(var table):
            let next = table.next()
            reader = .table(table)
            return next
        case .parquet(var table):
            let next = table.next()
            reader = .parquet(table)
            return next
        case .lines(var lines):
            let line = lines.next()
            reader = .lines(lines)
            switch line {
            case nil:
                return nil
            case .tooLong(let number):
                return (number, .invalid(text: "", reason: "line longer than \(LineReader.maxLineBytes) bytes"))
            case .readError(let message, let number):
                return (number, .unreadable(reason: "cannot read the list: \(message)"))
            case .text(let text, let number):
                return (number, ListLineParser.parse(text))
            }
        }
    }
}
