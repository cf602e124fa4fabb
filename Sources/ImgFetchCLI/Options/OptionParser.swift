import Glibc
import ImgFetchCore

/// A command-line mistake: which option (as the user spelled it) and what is wrong with it.
///
/// `description` is always a single line, so the CLI can print it after `imgfetch: ` and exit 2.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What is wrong with the option.
    public enum Problem: Equatable, Sendable {
        /// No option has this name.
        case unknownOption
        /// A value-taking option came last, with nothing after it.
        case missingValue
        /// A flag was given `=value`.
        case unexpectedValue
        /// The value does not parse or is out of range; a nil value keeps secrets out of the message.
        case invalidValue(String?, reason: String)
        /// The option does not make sense with the others given; the reason says which and why.
        case combination(String)
    }

    /// The option as the user wrote it (`-j` or `--concurrency`), without any `=value`.
    public let option: String
    public let problem: Problem

    public init(option: String, problem: Problem) {
        self.option = option
        self.problem = problem
    }

    public var description: String {
        let option = Self.quoted(self.option)
        switch problem {
        case .unknownOption:
            return "unknown option \(option)"
        case .missingValue:
            return "option \(option) needs a value"
        case .unexpectedValue:
            return "option \(option) takes no value"
        case .invalidValue(let value?, let reason):
            return "invalid value \(Self.quoted(value)) for \(option): \(reason)"
        case .invalidValue(nil, let reason):
            return "invalid value for \(option): \(reason)"
        case .combination(let reason):
            return "option \(option) \(reason)"
        }
    }

    /// Single-quotes `text`, escaping control characters so a pasted CR or LF cannot split the message.
    static func quoted(_ text: String) -> String {
        var result = "'"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "'"
    }
}

/// Turns `argv` into `CommandLineOptions`, GNU style, by hand (no outside packages here).
///
/// Long options take `--name value` or `--name=value`; short options take `-j 4` or `-j4` and
/// bundle (`-qj4`, `-qo dir`). Options and lists may be interleaved; `--` ends options, and a lone
/// `-` is a list (stdin). Long names must match exactly: prefixes would make scripts break when a
/// later version adds an option sharing the prefix. Every argument is parsed even after `--help`,
/// so a typo is reported rather than hidden behind the help text.
public enum OptionParser {
    /// Parses `arguments` (without argv[0]) and validates every value.
    /// `environment` is read for a cluster's shard (`ShardSelector.fromEnvironment`) when no `--shard` is given.
    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> CommandLineOptions {
        var options = CommandLineOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                options.lists.append(contentsOf: remaining)
                break
            } else if argument.hasPrefix("--") {
                try parseLong(argument, remaining: &remaining, into: &options)
            } else if argument.hasPrefix("-"), argument != "-" {
                try parseShortBundle(argument, remaining: &remaining, into: &options)
            } else {
                options.lists.append(argument)
            }
        }
        // Only a run takes a shard: --help and --version work in any environment.
        if options.shard == nil && options.action == .run { options.shard = try ShardSelector.fromEnvironment(environment) }
        options.shard?.key = options.shardBy
        try checkCombinations(options)
        if options.action == .run { try resolveObjectStore(&options, environment: environment) }
        return options
    }

    /// Options that are valid alone but not together: refused rather than silently ignored.
    private static func checkCombinations(_ options: CommandLineOptions) throws(UsageError) {
        for (option, given) in [("--max-dimension", options.maxDimension != nil), ("--resize", options.resize != nil)]
        where given && options.saveAs == .original {
            throw UsageError(option: option, problem: .combination(
                "needs --save-as png, ppm, pam, jpeg or webp: original bytes are saved unchanged, never resized"))
        }
        if options.maxDimension != nil && options.resize != nil {
            throw UsageError(option: "--max-dimension", problem: .combination(
                "cannot be used with --resize: it is --resize N --fit keep-ratio-largest; give one of them"))
        }
        // The defaults (keep-ratio-largest, black) are what --max-dimension does, so they pass unremarked.
        for (option, given) in [("--fit", options.fit != .keepRatioLargest), ("--upscale", options.upscale),
                                ("--pad-color", options.padColor != .black)] where given && options.resize == nil {
            throw UsageError(option: option, problem: .combination("needs --resize N"))
        }
        if options.padColor != .black && options.fit != .pad {
            throw UsageError(option: "--pad-color", problem: .combination("needs --fit pad: the other modes add no border"))
        }
        if options.quality != nil && options.saveAs != .jpeg && options.saveAs != .webp {
            throw UsageError(option: "--quality", problem: .combination(
                "needs --save-as jpeg or webp: the other outputs are lossless or the original bytes"))
        }
        try checkDatasetCombinations(options)
        if options.shardBy != .url && options.shard == nil {
            throw UsageError(option: "--shard-by", problem: .combination("needs --shard K/N, or a cluster's shard in the environment"))
        }
        if options.requireVerified && options.noDecode {
            throw UsageError(option: "--require-verified", problem: .combination(
                "cannot be used with --no-decode: without decoding nothing is verified"))
        }
    }

    /// `-o s3://…`: its credentials from the environment, and its local work directory.
    private static func resolveObjectStore(_ options: inout CommandLineOptions, environment: [String: String]) throws(UsageError) {
        guard let location = options.objectStore else { return }
        if options.galleryFile != nil {
            throw UsageError(option: "--gallery", problem: .combination("cannot be used with -o s3://…: the page links to local files"))
        }
        switch S3Access.fromEnvironment(environment) {
        case .success(let access): options.objectStoreAccess = access
        case .failure(let error): throw UsageError(option: "-o", problem: .combination("\(location): \(error.reason)"))
        }
        if let text = environment["IMGFETCH_S3_PART_SIZE"], !text.isEmpty {
            guard ValueParser.isDigits(text), let size = Int(text), (1 << 10...5 << 30).contains(size) else {
                throw UsageError(option: "-o", problem: .combination(
                    "IMGFETCH_S3_PART_SIZE '\(text)' is not a number of bytes from 1024 to 5 GiB (S3 takes 5 MiB at least)"))
            }
            options.objectStorePartSize = size
        }
        options.outputDirectory = options.workDirectory ?? ObjectStoreOutput.defaultWorkDirectory(for: location, environment: environment)
    }

    /// Options of WebDataset shards, and the options of files that shards have no use for.
    private static func checkDatasetCombinations(_ options: CommandLineOptions) throws(UsageError) {
        let defaults = CommandLineOptions()
        guard options.outputFormat == .webdataset else {
            for (option, given) in [("--shard-samples", options.shardSamples != defaults.shardSamples),
                                    ("--shard-prefix", options.shardPrefix != nil),
                                    ("--key-column", options.table.keyColumn != nil)] where given {
                throw UsageError(option: option, problem: .combination("needs --output-format webdataset"))
            }
            return
        }
        if options.table.keyColumn != nil && options.table.format == .txt {
            throw UsageError(option: "--key-column", problem: .combination("needs --input-format csv, tsv or jsonl"))
        }
        let fileOptions = [("--gallery", options.galleryFile != nil, "shards have no image files to show"),
                           ("--name", options.naming != defaults.naming, "samples are named by their key"),
                           ("--overwrite", options.existingFiles != defaults.existingFiles, "a shard is always written whole"),
                           ("--cache-policy", options.cachePolicy != defaults.cachePolicy,
                            "shards keep no cache index; a complete shard is skipped by its stats file")]
        for (option, given, reason) in fileOptions where given {
            throw UsageError(option: option, problem: .combination("cannot be used with --output-format webdataset: \(reason)"))
        }
    }

    /// Handles `--name`, `--name value` and `--name=value`.
    private static func parseLong(_ argument: String, remaining: inout ArraySlice<String>,
                                  into options: inout CommandLineOptions) throws(UsageError) {
        let body = argument.dropFirst(2)
        let name: Substring
        let inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = body[..<equals]
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = body
            inlineValue = nil
        }
        let spelling = "--" + name
        guard let option = OptionTable.byLongName[String(name)] else {
            throw UsageError(option: name.isEmpty ? argument : spelling, problem: .unknownOption)
        }
        switch option {
        case .flag(let flag):
            guard inlineValue == nil else { throw UsageError(option: spelling, problem: .unexpectedValue) }
            apply(flag, to: &options)
        case .valued(let valued):
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw UsageError(option: spelling, problem: .missingValue)
            }
            try apply(valued, value: value, spelling: spelling, to: &options)
        }
    }

    /// Handles `-q`, `-j4`, `-j 4` and bundles such as `-qj4`: a value-taking option ends the bundle.
    private static func parseShortBundle(_ argument: String, remaining: inout ArraySlice<String>,
                                         into options: inout CommandLineOptions) throws(UsageError) {
        var letters = argument.dropFirst()
        while let letter = letters.popFirst() {
            let spelling = "-" + String(letter)
            guard let option = OptionTable.byShortName[letter] else {
                throw UsageError(option: spelling, problem: .unknownOption)
            }
            switch option {
            case .flag(let flag):
                apply(flag, to: &options)
            case .valued(let valued):
                guard let value = letters.isEmpty ? remaining.popFirst() : String(letters) else {
                    throw UsageError(option: spelling, problem: .missingValue)
                }
                try apply(valued, value: value, spelling: spelling, to: &options)
                return
            }
        }
    }

    private static func apply(_ flag: Option.Flag, to options: inout CommandLineOptions) {
        switch flag {
        case .fifo: options.order = .fifo
        case .lifo: options.order = .lifo
        case .insecure: options.insecure = true
        case .allowDowngrade: options.allowDowngrade = true
        case .overwrite: options.existingFiles = .overwrite
        case .skipExisting: options.existingFiles = .skip
        case .quiet: options.quiet = true
        case .jsonl: options.jsonl = true
        case .noDecode: options.noDecode = true
        case .upscale: options.upscale = true
        case .failuresAreData: options.failuresAreData = true
        case .requireVerified: options.requireVerified = true
        case .ignoreOptOut: options.ignoreOptOut = true
        case .robots: options.robots = true
        // As in curl, the last of --http1.1 and --http2 wins.
        case .http1_1: options.httpVersion = .http1_1
        case .http2: options.httpVersion = .http2
        case .help: options.action = .help
        // Help wins over the other actions whatever their order: asking for help is never a mistake.
        case .version: request(.version, in: &options)
        case .manPage: request(.manPage, in: &options)
        }
    }

    private static func apply(_ option: Option.Valued, value: String, spelling: String,
                              to options: inout CommandLineOptions) throws(UsageError) {
        switch option {
        case .outputDirectory:
            if let scheme = ValueParser.urlScheme(value) {
                guard scheme == "s3" else {  // any case: S3:// is s3://
                    throw UsageError(option: spelling, problem: .invalidValue(value, reason: "only s3:// object storage is supported; a local directory has no scheme"))
                }
                switch S3Location.parse(value) {
                case .success(let location): options.objectStore = location
                case .failure(let error): throw UsageError(option: spelling, problem: .invalidValue(value, reason: error.reason))
                }
            } else {
                options.objectStore = nil
                options.outputDirectory = try ValueParser.path(value, for: spelling)
            }
        case .workDirectory:
            options.workDirectory = try ValueParser.path(value, for: spelling)
        case .concurrency:
            options.concurrency = try ValueParser.integer(value, in: 1...1024, for: spelling)
        case .perHost:
            options.perHost = try ValueParser.integer(value, in: 1...1024, for: spelling)
        case .timeout:
            options.timeout = try ValueParser.seconds(value, for: spelling)
        case .connectTimeout:
            options.connectTimeout = try ValueParser.seconds(value, for: spelling)
        case .maxTime:
            options.maxTime = try ValueParser.seconds(value, for: spelling)
        case .retries:
            options.retries = try ValueParser.integer(value, in: 0...100, for: spelling)
        case .inputFormat:
            guard let format = InputFormat(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected txt, csv, tsv or jsonl"))
            }
            options.table.format = format
        case .urlColumn:
            guard !value.isEmpty else { throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected a column name")) }
            options.table.urlColumn = value
        case .captionColumn:
            guard !value.isEmpty else { throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected a column name")) }
            options.table.captionColumn = value
        case .shard:
            options.shard = try ShardSelector.parse(value, for: spelling)
        case .shardBy:
            guard let key = ShardSelector.Key(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected url or host"))
            }
            options.shardBy = key
        case .keyColumn:
            guard !value.isEmpty else { throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected a column name")) }
            options.table.keyColumn = value
        case .outputFormat:
            guard let format = OutputFormat(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected files or webdataset"))
            }
            options.outputFormat = format
        case .shardPrefix:
            guard !value.isEmpty, value.utf8.count <= 64,
                  value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                      || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected up to 64 letters, digits, '-' or '_'"))
            }
            options.shardPrefix = value
        case .shardSamples:
            options.shardSamples = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        case .ratePerHost:
            options.ratePerHost = try ValueParser.rate(value, for: spelling)
        case .hostFailures:
            options.hostFailureLimit = try ValueParser.integer(value, in: 0...1_000_000, for: spelling)
        case .deadline:
            options.deadline = try ValueParser.seconds(value, for: spelling)
        case .header:
            options.headers.append(try ValueParser.header(value, for: spelling))
        case .userAgent:
            options.userAgent = try ValueParser.userAgent(value, for: spelling)
        case .user:
            options.credentials = try ValueParser.credentials(value, for: spelling)
        case .cookieJar:
            options.cookieJar = try ValueParser.path(value, for: spelling)
        case .caCertificate:
            options.caCertificateFile = try ValueParser.path(value, for: spelling)
        case .resolve:
            options.resolve.append(try ValueParser.resolveEntry(value, for: spelling))
        case .maxSize:
            options.maxSize = try ValueParser.byteCount(value, for: spelling)
        case .minFree:
            options.minimumFree = value == "0" ? 0 : try ValueParser.byteCount(value, for: spelling)
        case .name:
            guard let scheme = FileNamer.Scheme(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected 'url' or 'hash'"))
            }
            options.naming = scheme
        case .progress:
            guard let mode = ProgressMode(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected auto, bar, plain or none"))
            }
            options.progress = mode
        case .progressInterval:
            options.progressInterval = try ValueParser.seconds(value, for: spelling)
        case .report:
            options.reportFile = try ValueParser.path(value, for: spelling)
        case .gallery:
            options.galleryFile = try ValueParser.path(value, for: spelling)
        case .saveAs:
            guard let choice = SaveAsChoice(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected original, png, ppm, pam, jpeg or webp"))
            }
            options.saveAs = choice
        case .cachePolicy:
            guard let policy = CachePolicy(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected protocol, reload or only-if-cached"))
            }
            options.cachePolicy = policy
        case .maxDimension:
            options.maxDimension = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        case .resize:
            options.resize = try ValueParser.integer(value, in: 1...1_000_000, for: spelling)
        case .fit:
            guard let fit = Resize.Fit(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(
                    value, reason: "expected " + Resize.Fit.allCases.map(\.rawValue).joined(separator: ", ")))
            }
            options.fit = fit
        case .padColor:
            options.padColor = try ValueParser.color(value, for: spelling)
        case .quality:
            options.quality = try ValueParser.integer(value, in: 1...100, for: spelling)
        case .maxPixels:
            options.maxPixels = try ValueParser.integer(value, in: 1...Int(Int32.max) * 64, for: spelling)
        case .completions:
            guard let shell = CompletionShell(rawValue: value) else {
                throw UsageError(option: spelling, problem: .invalidValue(value, reason: "expected bash, zsh or fish"))
            }
            request(.completions(shell), in: &options)
        }
    }

    /// Sets an action other than help: the last one given wins, but never over `--help`.
    private static func request(_ action: CommandLineOptions.Action, in options: inout CommandLineOptions) {
        if options.action != .help { options.action = action }
    }
}

/// Validators for option values; each throws a `UsageError` that says what was expected.
enum ValueParser {
    /// Bounds for seconds: under 1 ms libcurl would read 0 as "no limit", and the upper bound keeps
    /// the millisecond conversion far from overflow.
    static let secondsRange = 0.001...1_000_000.0

    static func integer(_ value: String, in range: ClosedRange<Int>, for option: String) throws(UsageError) -> Int {
        // Int("+4") parses; digits only keeps "4" the one spelling scripts will see echoed back.
        guard isDigits(value), let number = Int(value), range.contains(number) else {
            throw invalid(value, option, "expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `RRGGBB` in hex, as in CSS (a leading `#` is allowed; `--pad-color '#ffffff'`).
    static func color(_ value: String, for option: String) throws(UsageError) -> Resize.Color {
        let hex = value.hasPrefix("#") ? value.dropFirst() : Substring(value)
        guard hex.utf8.count == 6, let rgb = UInt32(hex, radix: 16), hex.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else {
            throw invalid(value, option, "expected a color as six hex digits, RRGGBB (000000 is black, ffffff white)")
        }
        return Resize.Color(red: UInt8(rgb >> 16), green: UInt8(rgb >> 8 & 0xff), blue: UInt8(rgb & 0xff))
    }

    /// A plain decimal (`15`, `2.5`, `.5`): no sign, exponent, `inf` or `nan`, which `Double()` would accept.
    static func seconds(_ value: String, for option: String) throws(UsageError) -> Double {
        try decimal(value, for: option, expected: "a number of seconds")
    }

    /// Requests per second: a plain decimal from 0.001 to 1000000, as `seconds` reads it.
    static func rate(_ value: String, for option: String) throws(UsageError) -> Double {
        try decimal(value, for: option, expected: "requests per second")
    }

    /// A plain decimal in `secondsRange`; `expected` says what it counts, in the error.
    private static func decimal(_ value: String, for option: String, expected: String) throws(UsageError) -> Double {
        let parts = value.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let wellFormed = parts.allSatisfy { isDigits($0, allowEmpty: true) } && value.utf8.contains(where: isDigit)
        guard wellFormed, let number = Double(value), secondsRange.contains(number) else {
            throw invalid(value, option, "expected \(expected) from 0.001 to 1000000")
        }
        return number
    }

    /// A positive integer with an optional binary suffix: k/K = 1024, m/M = 1024², g/G = 1024³.
    static func byteCount(_ value: String, for option: String) throws(UsageError) -> Int64 {
        var digits = Substring(value)
        var multiplier: Int64 = 1
        switch digits.last {
        case "k", "K": multiplier = 1 << 10
        case "m", "M": multiplier = 1 << 20
        case "g", "G": multiplier = 1 << 30
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
        guard isDigits(digits), let count = Int64(digits), count > 0 else {
            throw invalid(value, option, "expected a positive byte count, optionally with suffix k, M or G")
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw invalid(value, option, "byte count too large") }
        return bytes
    }

    /// `Name: value` with an RFC 9110 token as the name; CR and LF would let a value smuggle in more headers.
    ///
    /// Errors never echo the value, which is often a secret (`X-Api-Key: …`); at most the name.
    static func header(_ value: String, for option: String) throws(UsageError) -> String {
        let colon = value.firstIndex(of: ":")
        let name = colon.map { value[..<$0] } ?? ""
        let validName = !name.isEmpty && name.unicodeScalars.allSatisfy(isTokenCharacter)
        guard !containsLineBreak(value) else {
            let what = validName ? "header \(UsageError.quoted(String(name)))" : "a header"
            throw UsageError(option: option, problem: .invalidValue(nil, reason: "\(what) must not contain CR or LF"))
        }
        guard validName else {
            throw UsageError(option: option, problem: .invalidValue(nil, reason: "expected 'Name: value' with a token name"))
        }
        return value
    }

    static func userAgent(_ value: String, for option: String) throws(UsageError) -> String {
        guard !value.isEmpty, !containsLineBreak(value) else {
            throw invalid(value, option, "expected a non-empty string without CR or LF")
        }
        return value
    }

    /// `USER:PASS`; the value is never echoed, because it is a password.
    static func credentials(_ value: String, for option: String) throws(UsageError) -> String {
        guard value.contains(":") else {
            throw UsageError(option: option, problem: .invalidValue(nil, reason: "expected USER:PASS"))
        }
        return value
    }

    /// curl's `HOST:PORT:ADDR[,ADDR…]` form: a host name, a port from 1 to 65535, and numeric IPv4
    /// or IPv6 addresses (IPv6 may be bracketed). curl's other forms (`+HOST…` for a temporary
    /// entry, `-HOST:PORT` to remove one) mean nothing for one run and are refused. Returned as
    /// given, for libcurl's `CURLOPT_RESOLVE`.
    static func resolveEntry(_ value: String, for option: String) throws(UsageError) -> String {
        let expected = "expected HOST:PORT:ADDRESS[,ADDRESS...] with numeric addresses"
        let parts = value.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        // libcurl keeps host names of up to 255 bytes here; a longer one would fail every transfer.
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.count < 256, !parts[0].hasPrefix("+"), !parts[0].hasPrefix("-"),
              !parts[0].unicodeScalars.contains(where: { $0 == "/" || $0 == "[" || $0.properties.isWhitespace }) else {
            throw invalid(value, option, expected)
        }
        guard isDigits(parts[1]), let port = Int(parts[1]), (1...65535).contains(port) else {
            throw invalid(value, option, "the port must be a number from 1 to 65535")
        }
        let addresses = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        for address in addresses where !isNumericAddress(address) {
            throw invalid(value, option, "\(UsageError.quoted(String(address))) is not an IPv4 or IPv6 address")
        }
        return value
    }

    private static func isNumericAddress(_ text: Substring) -> Bool {
        var address = String(text)
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        var buffer = in6_addr()
        return inet_pton(AF_INET, address, &buffer) == 1 || inet_pton(AF_INET6, address, &buffer) == 1
    }

    /// `s3` of `s3://…`: the scheme of a URL-like value (letters, digits, `+`, `-`, `.` before `://`).
    static func urlScheme(_ value: String) -> String? {
        guard let colon = value.utf8.firstIndex(of: UInt8(ascii: ":")), value.utf8[colon...].starts(with: "://".utf8) else { return nil }
        let scheme = value[..<colon]
        guard let first = scheme.utf8.first, isLetter(first),
              scheme.utf8.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }) else { return nil }
        return scheme.lowercased()
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    static func path(_ value: String, for option: String) throws(UsageError) -> String {
        guard !value.isEmpty else { throw invalid(value, option, "expected a non-empty path") }
        return value
    }

    private static func invalid(_ value: String, _ option: String, _ reason: String) -> UsageError {
        UsageError(option: option, problem: .invalidValue(value, reason: reason))
    }

    static func isDigits(_ text: some StringProtocol, allowEmpty: Bool = false) -> Bool {
        (allowEmpty || !text.isEmpty) && text.utf8.allSatisfy(isDigit)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func containsLineBreak(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 == "\r" || $0 == "\n" }
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) { return true }
        return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
    }
}
