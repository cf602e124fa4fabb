/// A command-line mistake: which option (as the user spelled it) and what is wrong with it.
///
/// `description` is always a single line, so the CLI can print it after `imgfetch: ` and exit 2.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What is wrong with the option.
    public enum Problem: Equatable, Sendable {
        /// No option has this name.
        case unknownOption
        /// Another tool's option (img2dataset's), which imgfetch does without; the reason says why.
        case foreignOption(String)
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

    /// What was probably meant (`--concurrency` for `--concurency`, `jpeg` for `jpg`), said after the problem.
    public var suggestion: String?

    public init(option: String, problem: Problem, suggestion: String? = nil) {
        self.option = option
        self.problem = problem
        self.suggestion = suggestion
    }

    public var description: String {
        problemText + (suggestion.map { "; did you mean \(Self.quoted($0))?" } ?? "")
    }

    private var problemText: String {
        let option = Self.quoted(self.option)
        switch problem {
        case .unknownOption:
            return "unknown option \(option)"
        case .foreignOption(let reason):
            return "unknown option \(option), \(reason)"
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
