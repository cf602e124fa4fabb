import Foundation

/// A library's own command-line decoder (`dwebp`, `avifdec`, `tifftopnm`, `bmptopnm`, …), run on a
/// fixture to give the pixels the codec's output must equal.
enum ReferenceDecoder {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes `input` to `directory/name`, runs `tool` with `arguments` (`{in}` and `{out}` stand
    /// for the input and an output path; without `{out}` the output is stdout) and returns the
    /// output's bytes. `then` names a second tool that turns the output into a Netpbm file (e.g.
    /// `pngtopam` after `avifdec`).
    /// `outputSuffix` is appended to the output path, for tools that pick the format by extension
    /// (write `{out}` + the suffix in `arguments` too).
    static func run(_ tool: String, _ arguments: [String], input: [UInt8], name: String, directory: String,
                    outputSuffix: String = "") throws -> [UInt8] {
        let inputPath = directory + "/reference-" + name
        let outputPath = inputPath + ".out" + outputSuffix
        try Data(input).write(to: URL(fileURLWithPath: inputPath))
        defer {
            try? FileManager.default.removeItem(atPath: inputPath)
            try? FileManager.default.removeItem(atPath: outputPath)
        }
        let toFile = arguments.contains { $0.hasPrefix("{out}") }
        let stdout = try execute(tool, arguments.map { $0 == "{in}" ? inputPath : $0 == "{out}" + outputSuffix ? outputPath : $0 })
        return toFile ? [UInt8](try Data(contentsOf: URL(fileURLWithPath: outputPath))) : stdout
    }

    /// The reference's pixels: its output parsed as Netpbm, after `convert` (e.g. `["pngtopam", "-alphapam"]`) when given.
    static func image(_ tool: String, _ arguments: [String], input: [UInt8], name: String, directory: String,
                      convert: [String]? = nil, outputSuffix: String = "") throws -> Image {
        var output = try run(tool, arguments, input: input, name: name, directory: directory, outputSuffix: outputSuffix)
        if let convert {
            output = try run(convert[0], Array(convert.dropFirst()) + ["{in}"], input: output, name: name + ".converted", directory: directory)
        }
        return try NetpbmReader.read(output)
    }

    private static func execute(_ tool: String, _ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                + String(decoding: errors, as: UTF8.self))
        }
        return [UInt8](data)
    }
}
