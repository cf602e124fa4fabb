/// One item to fetch: the parsed URL and the name its file gets.
public struct DownloadRequest: Sendable {
    public let url: ParsedURL
    public let name: OutputName

    public init(url: ParsedURL, name: OutputName) {
        self.url = url
        self.name = name
    }
}
