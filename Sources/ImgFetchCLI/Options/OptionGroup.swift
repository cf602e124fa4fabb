/// Options that belong together in the help and the man page (`Transfers`, `Requests`), and the
/// topic that `--help TOPIC` shows alone.
struct OptionGroup: Sendable {
    /// The heading: `Transfers`.
    let title: String
    /// What `--help` takes to show only this group: `transfers`.
    let topic: String
    let options: [OptionSpec]

    init(_ title: String, topic: String, _ options: [OptionSpec]) {
        self.title = title
        self.topic = topic
        self.options = options
    }
}
