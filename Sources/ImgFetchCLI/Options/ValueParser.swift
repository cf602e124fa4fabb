import Glibc
import ImgFetchCore

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

    /// `RRGGBB` in hex, as in CSS (a leading `#` is allowed; `--background '#ffffff'`).
    static func color(_ value: String, for option: String) throws(UsageError) -> Resize.Color {
        let hex = value.hasPrefix("#") ? value.dropFirst() : Substring(value)
        guard hex.utf8.count == 6, let rgb = UInt32(hex, radix: 16), hex.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else {
            throw invalid(value, option, "expected a color as six hex digits, RRGGBB (000000 is black, ffffff white)")
        }
        return Resize.Color(red: UInt8(rgb >> 16), green: UInt8(rgb >> 8 & 0xff), blue: UInt8(rgb & 0xff))
    }

    /// A plain decimal (`15`, `2.5`, `.5`): no sign, exponent, `inf` or `nan`, which `Double()`
    /// would accept; in seconds, or with a unit: `ms`, `s`, `m` (minutes) or `h`.
    static func seconds(_ value: String, for option: String) throws(UsageError) -> Double {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        guard let unit = units.first(where: { value.hasSuffix($0.suffix) }), value.count > unit.suffix.count else {
            return try decimal(value, for: option, expected: "a number of seconds (or with ms, s, m or h)")
        }
        guard let count = plainDecimal(value.dropLast(unit.suffix.count)), secondsRange.contains(count * unit.seconds) else {
            throw invalid(value, option, "expected a number of seconds (or with ms, s, m or h) from 0.001 to 1000000 s")
        }
        return count * unit.seconds
    }

    /// Requests per second: a plain decimal from 0.001 to 1000000, as `seconds` reads it.
    static func rate(_ value: String, for option: String) throws(UsageError) -> Double {
        try decimal(value, for: option, expected: "requests per second")
    }

    /// A plain decimal in `secondsRange`; `expected` says what it counts, in the error.
    private static func decimal(_ value: String, for option: String, expected: String) throws(UsageError) -> Double {
        guard let number = plainDecimal(value), secondsRange.contains(number) else {
            throw invalid(value, option, "expected \(expected) from 0.001 to 1000000")
        }
        return number
    }

    /// `text` as a number when it is digits with at most one `.` (at least one digit); nil otherwise.
    private static func plainDecimal(_ text: some StringProtocol) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.allSatisfy({ isDigits($0, allowEmpty: true) }), text.utf8.contains(where: isDigit) else { return nil }
        return Double(String(text))
    }

    /// A positive integer with an optional binary unit: k/K = 1024, m/M = 1024², g/G = 1024³, each also with B or iB.
    static func byteCount(_ value: String, for option: String) throws(UsageError) -> Int64 {
        var digits = Substring(value)
        // 10MB, 10MiB and 10M alike: binary multiples, as curl counts them; a plain B is bytes.
        for unit in ["iB", "ib", "B", "b"] where digits.hasSuffix(unit) && digits.count > unit.count {
            digits = digits.dropLast(unit.count)
            break
        }
        var multiplier: Int64 = 1
        switch digits.last {
        case "k", "K": multiplier = 1 << 10
        case "m", "M": multiplier = 1 << 20
        case "g", "G": multiplier = 1 << 30
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
        guard isDigits(digits), let count = Int64(digits), count > 0 else {
            throw invalid(value, option, "expected a positive byte count, optionally with a unit: k, M or G "
                + "(10M, 10MB and 10MiB all mean 10 × 1024² bytes)")
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

    /// `USER:PASS`, or `USER`, whose password is asked for on the terminal (`PasswordPrompt`); the
    /// value is never echoed, because it holds a password.
    static func credentials(_ value: String, for option: String) throws(UsageError) -> String {
        guard !value.isEmpty, !value.hasPrefix(":"), !containsLineBreak(value) else {
            throw UsageError(option: option, problem: .invalidValue(nil, reason: "expected USER:PASS, or USER to be asked for the password"))
        }
        return value
    }

    /// `-H`'s value: one header, or `@FILE`: a header per line of FILE (blank lines and lines
    /// starting with `#` skipped), as curl reads `-H @FILE`. Values are never echoed.
    static func headers(_ value: String, for option: String) throws(UsageError) -> [String] {
        guard value.hasPrefix("@") else { return [try header(value, for: option)] }
        let path = String(value.dropFirst())
        guard !path.isEmpty, path != "-" else {
            throw invalid(value, option, "expected @FILE, a file of header lines (stdin may hold the list)")
        }
        let bytes: [UInt8]
        switch FileDescriptorIO.readSmallFile(path, limit: 1 << 20) {
        case nil: throw invalid(value, option, "no such file")
        case .failure(let failure)?: throw UsageError(option: option, problem: .invalidValue(nil, reason: failure.reason))
        case .success(let read)?: bytes = read
        }
        var headers: [String] = []
        for (number, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = String(decoding: raw.last == 0x0D ? raw.dropLast() : raw[...], as: UTF8.self)
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do {
                headers.append(try header(line, for: option))
            } catch {
                guard case .invalidValue(_, let reason) = error.problem else { throw error }
                throw UsageError(option: option, problem: .invalidValue(nil, reason: "\(path):\(number + 1): \(reason)"))
            }
        }
        guard !headers.isEmpty else { throw invalid(value, option, "\(path) has no header lines") }
        return headers
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

    /// An `--allow-host` value added to `policy`: a host name (`.example.com` for its
    /// subdomains), an address, or a network in CIDR notation.
    static func allowHost(_ value: String, into policy: inout AddressPolicy, for option: String) throws(UsageError) {
        guard value.utf8.count < 256, !value.hasPrefix("-"), policy.allow(value) else {
            throw invalid(value, option, "expected a host name, an address or a network such as 10.0.0.0/8 or fd00::/8")
        }
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

    /// `--max-aspect-ratio`: a plain decimal from 1 (square only) to 1000000, or `inf` (img2dataset's
    /// default): no limit, nil.
    static func ratio(_ value: String, for option: String) throws(UsageError) -> Double? {
        if value == "inf" { return nil }
        guard let number = plainDecimal(value), (1...1_000_000).contains(number) else {
            throw invalid(value, option, "expected a ratio of the longer side to the shorter, from 1 to 1000000, such as 3 or 2.5")
        }
        return number
    }

    /// `--verify-hash COLUMN[:ALGORITHM]`: a column named `md5`, `sha256` or `sha512` says its own algorithm.
    static func hashColumn(_ value: String, for option: String) throws(UsageError) -> HashVerification {
        var column = value
        var algorithm = DigestAlgorithm(rawValue: value) ?? .sha256
        if let colon = value.lastIndex(of: ":"), let named = DigestAlgorithm(rawValue: String(value[value.index(after: colon)...])) {
            column = String(value[..<colon])
            algorithm = named
        } else if let colon = value.lastIndex(of: ":") {
            var error = invalid(value, option, "expected COLUMN or COLUMN:ALGORITHM, the algorithm md5, sha256 or sha512")
            error.suggestion = Suggestion.closest(to: String(value[value.index(after: colon)...]),
                                                  among: DigestAlgorithm.allCases.map(\.rawValue)).map { String(value[...colon]) + $0 }
            throw error
        }
        return HashVerification(column: try columnName(column, for: option), algorithm: algorithm)
    }

    /// A table column's name: anything but empty.
    static func columnName(_ value: String, for option: String) throws(UsageError) -> String {
        guard !value.isEmpty else { throw invalid(value, option, "expected a column name") }
        return value
    }

    /// `--shard-prefix`: up to 64 letters, digits, `-` and `_`, so shard names stay file names anywhere.
    static func shardPrefix(_ value: String, for option: String) throws(UsageError) -> String {
        guard !value.isEmpty, value.utf8.count <= 64,
              value.utf8.allSatisfy({ isDigit($0) || isLetter($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            throw invalid(value, option, "expected up to 64 letters, digits, '-' or '_'")
        }
        return value
    }

    /// One of `Choice`'s raw values; `expected` says which in an error (by default `a, b or c`).
    static func choice<Choice: CaseIterable & RawRepresentable>(_ value: String, for option: String, expected: String? = nil)
        throws(UsageError) -> Choice where Choice.RawValue == String {
        guard let choice = Choice(rawValue: value) else {
            let words = Choice.allCases.map(\.rawValue)
            var error = invalid(value, option, expected ?? "expected " + words.dropLast().joined(separator: ", ") + " or " + words.last!)
            error.suggestion = Suggestion.closest(to: value, among: words)
            throw error
        }
        return choice
    }

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
