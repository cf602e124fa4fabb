import Glibc

/// The AWS shared files, read as the AWS CLI and SDKs read them: `~/.aws/credentials`
/// (`AWS_SHARED_CREDENTIALS_FILE`), whose sections are profile names, and `~/.aws/config`
/// (`AWS_CONFIG_FILE`), whose sections are `[default]` and `[profile NAME]`. Lines are
/// `key = value`; a line starting with `#` or `;` is a comment; a key with no value followed by
/// indented lines holds those as sub-keys (`s3 =` then `  addressing_style = virtual` is
/// `s3.addressing_style`). A profile's settings are the config file's, with the credentials
/// file's over them. A missing file is an empty one.
public struct AWSConfigFiles: Sendable {
    public let credentialsPath: String
    public let configPath: String
    private let credentials: [String: [String: String]]
    private let config: [String: [String: String]]

    /// Larger files are refused: no one writes a megabyte of profiles.
    static let sizeLimit = 1 << 20

    public struct Failure: Error, Sendable {
        public let reason: String
    }

    /// The files `environment` names, or the defaults under `HOME` (the user's home directory
    /// from the password database when HOME is unset).
    public static func load(_ environment: [String: String]) throws(Failure) -> AWSConfigFiles {
        func home() -> String {
            if let home = environment["HOME"], !home.isEmpty { return home }
            if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
            return "/"
        }
        func path(_ variable: String, _ name: String) -> String {
            if let given = environment[variable], !given.isEmpty {
                return given.hasPrefix("~/") ? home() + given.dropFirst() : given
            }
            return OutputPaths.join(OutputPaths.join(home(), ".aws"), name)
        }
        let credentialsPath = path("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        let configPath = path("AWS_CONFIG_FILE", "config")
        return AWSConfigFiles(credentialsPath: credentialsPath, configPath: configPath,
                              credentials: try read(credentialsPath, isConfig: false),
                              config: try read(configPath, isConfig: true))
    }

    init(credentialsPath: String, configPath: String, credentials: [String: [String: String]], config: [String: [String: String]]) {
        self.credentialsPath = credentialsPath
        self.configPath = configPath
        self.credentials = credentials
        self.config = config
    }

    /// Profile `name`'s settings from both files, or nil when neither has it.
    public func profile(_ name: String) -> [String: String]? {
        guard config[name] != nil || credentials[name] != nil else { return nil }
        return (config[name] ?? [:]).merging(credentials[name] ?? [:]) { $1 }
    }

    private static func read(_ path: String, isConfig: Bool) throws(Failure) -> [String: [String: String]] {
        switch FileDescriptorIO.readSmallFile(path, limit: sizeLimit) {
        case nil: return [:]
        case .failure(let failure)?: throw Failure(reason: failure.reason)
        case .success(let bytes)?:
            do {
                return try parse(String(decoding: bytes, as: UTF8.self), isConfig: isConfig)
            } catch {
                throw Failure(reason: "\(path): \(error.reason)")
            }
        }
    }

    /// The profiles of a file's text, by name.
    static func parse(_ text: String, isConfig: Bool) throws(Failure) -> [String: [String: String]] {
        var profiles: [String: [String: String]] = [:]
        var section: String?
        var inSection = false
        var parent: String?
        // By bytes: "\r\n" is one Character, which a split on "\n" would not cut.
        for (number, raw) in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = Substring(String(decoding: raw.last == 0x0D ? raw.dropLast() : raw, as: UTF8.self))
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            let indented = line.first == " " || line.first == "\t"
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else { throw Failure(reason: "line \(number + 1): a section is written [NAME]") }
                let name = String(trimmed.dropFirst().dropLast()).trimmingWhitespace
                section = profileName(name, isConfig: isConfig)
                inSection = true
                parent = nil
                if let section, profiles[section] == nil { profiles[section] = [:] }
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw Failure(reason: "line \(number + 1): expected key = value")
            }
            let key = String(trimmed[..<equals]).trimmingWhitespace.lowercased()
            let value = String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace
            guard inSection else { throw Failure(reason: "line \(number + 1): a setting before the first [section]") }
            // A section that is no profile (`[sso-session x]`, `[services y]`): not read.
            guard let profile = section else { continue }
            if indented, let parent {
                profiles[profile]?[parent + "." + key] = value
            } else {
                profiles[profile]?[key] = value
                parent = value.isEmpty ? key : nil
            }
        }
        return profiles
    }

    /// The profile a section names: in the config file `default` and `profile NAME` (other
    /// sections, such as `sso-session` and `services`, are none); in the credentials file the name itself.
    private static func profileName(_ section: String, isConfig: Bool) -> String? {
        guard isConfig else { return section }
        if section == "default" { return section }
        let words = section.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard words.count == 2, words[0] == "profile" else { return nil }
        return String(words[1])
    }
}
