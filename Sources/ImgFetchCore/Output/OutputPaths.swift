/// Paths inside the output directory, shown as the user would type them.
public enum OutputPaths {
    /// `dir/name`, or just `name` when the directory is `.`.
    public static func join(_ directory: String, _ name: String) -> String {
        if directory == "." || directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
