/// A piece of prose that `--help` and the man page both show, each laid out its own way.
enum TextBlock: Sendable {
    /// Running text, filled to the width: one string, no line breaks.
    case paragraph(String)
    /// Terms with their explanations, one per line (`0    every item was saved or skipped`).
    case definitions([Definition])

    /// One term of a `definitions` block.
    struct Definition: Sendable {
        let term: String
        let text: String

        init(_ term: String, _ text: String) {
            self.term = term
            self.text = text
        }
    }
}

/// A command line with what it does, for the examples of `--help` and the man page.
struct UsageExample: Sendable {
    /// What the command does, ending in a colon.
    let explanation: String
    /// The command; a long one is split into lines ending in ` \`, so it fits in 80 columns.
    let command: String
    /// Shown in the short help (`-h`) too.
    let isBrief: Bool

    init(_ explanation: String, _ command: String, brief: Bool = false) {
        self.explanation = explanation
        self.command = command
        self.isBrief = brief
    }
}
