@testable import ImgFetchCLI

extension OptionParser {
    /// The options as `ImgFetchCommand` resolves them: parsed, then the run's environment read.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> CommandLineOptions {
        var options = try parse(arguments)
        try RunEnvironment.apply(environment, to: &options)
        return options
    }
}
