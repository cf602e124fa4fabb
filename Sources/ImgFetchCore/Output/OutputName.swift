/// The file name an item will be saved under, before its format is known.
///
/// A name derived from the URL gets the extension its sniffed format needs; a name the
/// list gave with `out=` is used exactly as given.
public struct OutputName: Sendable, Equatable {
    /// The name without an image extension (for `out=` names: the whole name).
    public let stem: String
    /// The image extension the URL's name carried, in its original case, if any.
    public let givenExtension: String?
    /// True for `out=` names, which are never changed by the sniffed format.
    public let isExplicit: Bool

    public init(stem: String, givenExtension: String?, isExplicit: Bool) {
        self.stem = stem
        self.givenExtension = givenExtension
        self.isExplicit = isExplicit
    }

    /// The final file name for a body of the given format.
    public func fileName(for format: ImageFormat) -> String {
        fileName(extension: format.fileExtension, accepting: format.acceptedExtensions)
    }

    /// The final file name for an output with extension `ext`; a given extension in `accepted` is kept as written.
    public func fileName(extension ext: String, accepting accepted: Set<String>) -> String {
        if isExplicit { return stem }
        if let given = givenExtension, accepted.contains(given.lowercased()) {
            return "\(stem).\(given)"
        }
        return "\(stem).\(ext)"
    }

    /// The file names to look for before downloading, to skip items saved by an earlier run: the
    /// name as given when it has an image extension (one `lstat` per item, which matters for
    /// million-line lists; a body of another format is still caught when it is placed), otherwise
    /// every name the sniffed format could give it.
    public var possibleFileNames: [String] {
        if isExplicit { return [stem] }
        if let given = givenExtension { return ["\(stem).\(given)"] }
        var names: [String] = []
        for format in ImageFormat.allCases {
            let name = "\(stem).\(format.fileExtension)"
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}
